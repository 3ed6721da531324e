"""Shelves and volumes written the way a project's existing DRF code is (issue 52): a
related input whose field reads its queryset through ``get_queryset()`` (DRF's way to a
lazy one), camelCase inputs without labels, a date input bounded per object by a
constraint that reads the model's required fields, and DRF's own hyperlinked naming in
the resource serializers (``tests.generic.shelves_api``).

Registered only by the tests that use them (tests/test_any_project.py and
tests/test_url_layouts.py).
"""

from __future__ import annotations

import datetime
from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from rest_framework import serializers

from affordances import condition, creates, guard, operation


class Shelf(models.Model):
    """A shelf in a room; a member sees only the shelves of the room named like them."""

    code = models.SlugField(max_length=12, unique=True)
    room = models.CharField(max_length=150)
    state = FSMField(default="open", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return self.code

    @operation(title="Close shelf")
    @transition(field=state, source="open", target="closed")
    def close(self) -> None:
        """Close the shelf: no volume is shelved on it any more, those on it stay."""


class ShelfField(serializers.PrimaryKeyRelatedField):
    """A shelf by its id, as DRF documents a lazy queryset: no ``queryset=``, an override
    of ``get_queryset()`` (here, the import a models module could not make at import)."""

    def get_queryset(self) -> models.QuerySet[Shelf]:
        from tests.generic.shelves import Shelf as Lazy

        return Lazy.objects.all()


class ShelveInput(serializers.Serializer):
    shelf = ShelfField()
    approvedAmount = serializers.DecimalField(
        source="approved_amount", max_digits=8, decimal_places=2, required=False
    )


class LendInput(serializers.Serializer):
    dueDate = serializers.DateField(source="due")


class AcquireInput(serializers.ModelSerializer):
    """A model serializer's input: a camelCase name for a model field is labelled by the
    field's verbose_name."""

    approvedAmount = serializers.DecimalField(  # the model's approved_amount
        source="approved_amount", max_digits=8, decimal_places=2, required=False
    )

    class Meta:
        model: Any = None  # Volume, set below once it exists
        fields = ["title", "pages", "acquired", "approvedAmount"]


def lending_window(volume: Volume | None, user: Any) -> dict[str, Any]:
    """A volume is due back within a year of its acquisition, not before it: bounds read
    from the model's own required field (``acquired``), as a project writes them."""
    assert volume is not None
    start = volume.acquired
    end = start + datetime.timedelta(days=365)
    return {
        "properties": {
            "dueDate": {"formatMinimum": start.isoformat(), "formatMaximum": end.isoformat()}
        }
    }


class Volume(models.Model):
    status = FSMField(default="stored", protected=True)
    title = models.CharField(max_length=100)
    pages = models.PositiveIntegerField()
    acquired = models.DateField()
    shelf = models.ForeignKey(Shelf, on_delete=models.CASCADE, null=True, blank=True)
    due = models.DateField(null=True, blank=True)
    approved_amount = models.DecimalField(
        "amount approved", max_digits=8, decimal_places=2, null=True, blank=True
    )
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return self.title

    @classmethod
    @creates(title="Acquire volume", input=AcquireInput)
    def acquire(cls, *, user: Any, **fields: Any) -> Volume:
        """Record a newly acquired volume."""
        return cls.objects.create(**fields)

    @operation(title="Shelve volume", input=ShelveInput)
    @transition(field=status, source="stored", target="shelved")
    def shelve(self, *, shelf: Shelf, approved_amount: Any = None) -> None:
        """Put a stored volume on a shelf the caller may see, with the amount approved."""
        self.shelf = shelf
        self.approved_amount = approved_amount

    @operation(title="Lend volume", input=LendInput, constraints=lending_window)
    @transition(field=status, source="shelved", target="lent")
    def lend(self, *, due: datetime.date) -> None:
        """Lend a shelved volume until a date within a year of its acquisition."""
        self.due = due


AcquireInput.Meta.model = Volume


# --- a condition and a guard that are not callable (registered only by one test) -------


@condition("too_heavy")
def weight(crate: Any) -> bool:
    return True


@guard("not_yours")
def keeper(crate: Any, user: Any) -> bool:
    return True


class Tote(models.Model):
    """A condition named like a model field: in the class body the field shadows it, so
    the transition's ``conditions`` holds the field, not the function."""

    state = FSMField(default="open", protected=True)
    weight = models.PositiveIntegerField(default=0)  # shadows the condition above
    keeper = "nobody"  # shadows the guard above
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Tote {self.pk}"

    @operation(title="Seal tote", guards=[keeper])  # type: ignore[list-item]
    @transition(
        field=state,
        source="open",
        target="sealed",
        conditions=[weight],  # type: ignore[list-item]
    )
    def seal(self) -> None:
        """Seal an open tote so nothing more goes in it before it is shipped."""
