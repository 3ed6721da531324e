"""Input serializers of the purchase-request operations: what each one takes."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import RegexValidator
from rest_framework import serializers

from procurement.rules import (
    CANCEL_REASONS,
    MAX_QUANTITY,
    PAYMENT_METHODS,
    QUOTE_REFERENCE_MAX_LENGTH,
    QUOTE_REFERENCE_MESSAGE,
    QUOTE_REFERENCE_PATTERN,
    REJECT_REASONS,
)

# A field accepted by more than one operation is declared once, here: every operation
# that takes it validates it alike (a create must not take what attach_quote refuses).


def _note(*, required: bool, help_text: str) -> serializers.CharField:
    return serializers.CharField(
        required=required, allow_blank=not required, max_length=500, help_text=help_text
    )


def _quote_reference(*, required: bool, help_text: str) -> serializers.CharField:
    return serializers.CharField(
        source="quote_reference",
        required=required,
        max_length=QUOTE_REFERENCE_MAX_LENGTH,
        validators=[RegexValidator(QUOTE_REFERENCE_PATTERN, QUOTE_REFERENCE_MESSAGE)],
        help_text=help_text,
    )


def _quantity(*, help_text: str) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_QUANTITY, help_text=help_text)


def _money(*, help_text: str, source: str | None = None) -> serializers.DecimalField:
    return serializers.DecimalField(
        source=source,
        max_digits=12,
        decimal_places=2,
        min_value=Decimal("0.01"),
        help_text=help_text,
    )


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value.replace("_", " ").capitalize()) for value in values]


class CreatePurchaseRequestInput(serializers.Serializer):
    title = serializers.CharField(max_length=200, help_text="What is to be bought.")
    costCenter = serializers.CharField(
        source="cost_center", max_length=20, help_text="Code of the cost center to charge."
    )
    supplier = serializers.CharField(max_length=100, help_text="Name of the supplier.")
    quantity = _quantity(help_text="Units.")
    unitPrice = _money(source="unit_price", help_text="Price of one unit in EUR.")
    neededBy = serializers.DateField(source="needed_by", help_text="When the goods are needed.")
    quoteReference = _quote_reference(
        required=False,
        help_text="The supplier's quote (required to submit above 10000).",
    )


class AttachQuoteInput(serializers.Serializer):
    quoteReference = _quote_reference(
        required=True, help_text="The supplier's quote reference, e.g. Q-2041."
    )


class NoteInput(serializers.Serializer):
    note = _note(required=False, help_text="Free text for the record.")


class RequiredNoteInput(serializers.Serializer):
    note = _note(required=True, help_text="What must change, or why: for the record.")


class RejectInput(serializers.Serializer):
    reason = serializers.ChoiceField(choices=_choices(REJECT_REASONS), help_text="Why.")
    note = _note(required=False, help_text="Free text for the requester.")


class PlaceOrderInput(serializers.Serializer):
    deliveryDate = serializers.DateField(
        source="delivery_date", help_text="Delivery date agreed with the supplier."
    )


class CancelInput(serializers.Serializer):
    reason = serializers.ChoiceField(choices=_choices(CANCEL_REASONS), help_text="Why.")
    note = _note(required=False, help_text="Free text for the record.")


class ReceiveInput(serializers.Serializer):
    quantity = _quantity(help_text="Units received; at most the units ordered.")


class InvoiceInput(serializers.Serializer):
    invoiceNumber = serializers.CharField(
        source="invoice_number", max_length=30, help_text="The supplier's invoice number."
    )
    amount = _money(help_text="Invoiced amount in EUR, as on the invoice.")


class PayInput(serializers.Serializer):
    paymentMethod = serializers.ChoiceField(
        source="payment_method",
        choices=_choices(tuple(PAYMENT_METHODS)),
        help_text="How to pay: card up to 1000, cheque up to 10000, bank transfer any amount.",
    )


class ClaimInput(serializers.Serializer):
    description = serializers.CharField(
        max_length=500, help_text="What is missing or damaged, for the carrier's claim."
    )


class DisputeInput(serializers.Serializer):
    reason = serializers.CharField(
        max_length=500, help_text="How the invoice differs from what was received."
    )
