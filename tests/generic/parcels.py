"""A parcel: one input of each kind, narrowed by every keyword of the constraint vocabulary.

``create_parcel`` (a collection operation: OpenAPI states its constraints) and
``dispatch_parcel`` (a transition: its affordance carries them) take the same input and
the same constraint, so tests/test_constraint_vocabulary.py can read that one narrowing
on every face. Registered only by that test (``tests.generic.parcels_api``).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from rest_framework import serializers

from affordances import creates, operation

SERVICES = ("economy", "standard", "express", "overnight")


class ParcelInput(serializers.Serializer):
    service = serializers.ChoiceField(
        choices=[(service, service.capitalize()) for service in SERVICES],
        help_text="How fast it travels.",
    )
    carrier = serializers.CharField(max_length=20, help_text="Who carries it.")
    weight = serializers.DecimalField(
        max_digits=6, decimal_places=2, min_value=Decimal("0.01"), help_text="In kg."
    )
    pieces = serializers.IntegerField(min_value=1, max_value=100, help_text="How many boxes.")
    reference = serializers.CharField(
        max_length=20, required=False, help_text="The sender's reference."
    )


# Every keyword of affordances.constraints.CONSTRAINT_KEYWORDS, and required.
CONSTRAINTS: dict[str, Any] = {
    "properties": {
        "service": {"enum": ["standard", "express"]},
        "carrier": {"const": "ACME"},
        "weight": {"minimum": Decimal("0.50"), "exclusiveMaximum": 30},
        "pieces": {"exclusiveMinimum": 1, "maximum": 10},
        "reference": {"minLength": 4, "maxLength": 12, "pattern": "^REF-"},
    },
    "required": ["reference"],
}


def parcel_constraints(parcel: Parcel | None, user: Any) -> dict[str, Any]:
    return copy.deepcopy(CONSTRAINTS)


class Parcel(models.Model):
    state = FSMField(default="packed", protected=True)
    service = models.CharField(max_length=20, blank=True, default="")
    carrier = models.CharField(max_length=20, blank=True, default="")
    weight = models.DecimalField(max_digits=6, decimal_places=2, null=True, blank=True)
    pieces = models.PositiveIntegerField(null=True, blank=True)
    reference = models.CharField(max_length=20, blank=True, default="")
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Parcel #{self.pk} ({self.state})"

    @classmethod
    @creates(title="Register parcel", input=ParcelInput, constraints=parcel_constraints)
    def register(cls, *, user: Any, **details: Any) -> Parcel:
        """Register a packed parcel with its service, carrier, weight, pieces and reference."""
        return cls.objects.create(**details)

    @operation(title="Dispatch parcel", input=ParcelInput, constraints=parcel_constraints)
    @transition(field=state, source="packed", target="dispatched")
    def dispatch(self, **details: Any) -> None:
        """Hand a packed parcel to its carrier, with what the label says of it."""
        for name, value in details.items():
            setattr(self, name, value)
