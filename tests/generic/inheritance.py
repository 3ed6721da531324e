"""A model keyed through multi-table inheritance: a ``Vehicle`` is an ``Asset``.

The child's primary key is its ``asset_ptr`` (a ``OneToOneField`` to the parent), whose
values are the parent's integer keys. Registered only by tests/test_inherited_key.py
(``tests.generic.inheritance_api``): every face must read that key as an integer.
"""

from __future__ import annotations

from django.db import models
from django_fsm import FSMField, transition

from affordances import operation


class Asset(models.Model):
    label = models.CharField(max_length=40, default="")

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Asset {self.pk}"


class Vehicle(Asset):
    phase = FSMField(default="parked", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Vehicle {self.pk} ({self.phase})"

    @operation(title="Start vehicle")
    @transition(field=phase, source="parked", target="moving")
    def start(self) -> None:
        """Start a parked vehicle: it is on the move until it parks again."""
