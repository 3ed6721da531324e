"""Input serializers of the order operations: what each transition takes."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import RegexValidator
from rest_framework import serializers

from orders.rules import CANCEL_REASONS

# A field accepted by more than one operation is declared once, here: every operation
# that takes it validates it alike.


def _note(*, required: bool, help_text: str) -> serializers.CharField:
    return serializers.CharField(
        required=required, allow_blank=not required, max_length=500, help_text=help_text
    )


def _money(*, help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=12, decimal_places=2, min_value=Decimal("0.01"), help_text=help_text
    )


class ShipOrderInput(serializers.Serializer):
    trackingNumber = serializers.CharField(
        source="tracking_number",
        max_length=20,
        min_length=8,
        validators=[RegexValidator(r"^[A-Z0-9]{8,20}$", "Use 8 to 20 capital letters or digits.")],
        help_text="Carrier tracking number: 8 to 20 capital letters or digits.",
    )


class CancelOrderInput(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=[(reason, reason.replace("_", " ").capitalize()) for reason in CANCEL_REASONS],
        help_text="Why the order is cancelled.",
    )
    note = _note(required=False, help_text="Free text for the record.")


class RefundOrderInput(serializers.Serializer):
    amount = _money(help_text="Amount to refund, in the order's currency; at most the order total.")
    note = _note(required=False, help_text="Free text for the record.")


class HoldOrderInput(serializers.Serializer):
    note = _note(
        required=True, help_text="Why the order is held: what must be checked before it ships."
    )


class CreateOrderInput(serializers.Serializer):
    description = serializers.CharField(max_length=200, help_text="What is ordered.")
    total = _money(help_text="Order total in EUR, greater than 0.")
    customer = serializers.CharField(
        required=False,
        max_length=150,
        help_text="Username of the customer (staff only; customers order for themselves).",
    )
