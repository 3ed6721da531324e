"""A purchase: the library's own model of a small shop, for the guarantees every project
relies on (execution, idempotency, row locks, negotiation, HAL-FORMS, OpenAPI and the
security suite) — tested on it with the demo unimportable.

Its life cycle, rules and roles are those a shop has: a create, transitions with and
without inputs, permissions per role, conditions and a guard that say why, constraints
per caller, confirmations, and a version. Registered only by the tests that use it
(``tests.generic.shop_api``; the users and purchases are made by ``tests.shop_data``).
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.utils import timezone
from django_fsm import FSMField, FSMModelMixin, transition
from rest_framework import serializers

from affordances import condition, creates, guard, operation

HIGH_VALUE = Decimal("1000.00")
REFUND_WINDOW = timedelta(days=30)
CANCEL_REASONS = ("customer_request", "payment_failure", "inventory_failure")


class Status(models.TextChoices):
    PENDING = "pending", "Pending"
    CONFIRMED = "confirmed", "Confirmed"
    SHIPPED = "shipped", "Shipped"
    DELIVERED = "delivered", "Delivered"
    REFUNDED = "refunded", "Refunded"
    CANCELLED = "cancelled", "Cancelled"


S = Status


# --- inputs ---------------------------------------------------------------------------


def _note(*, required: bool) -> serializers.CharField:
    return serializers.CharField(
        required=required, allow_blank=not required, max_length=500, help_text="For the record."
    )


def _money(help_text: str) -> serializers.DecimalField:
    return serializers.DecimalField(
        max_digits=12, decimal_places=2, min_value=Decimal("0.01"), help_text=help_text
    )


class ShipInput(serializers.Serializer):
    trackingNumber = serializers.CharField(
        source="tracking_number",
        max_length=20,
        min_length=8,
        validators=[RegexValidator(r"^[A-Z0-9]{8,20}$", "Use 8 to 20 capital letters or digits.")],
        help_text="Carrier tracking number: 8 to 20 capital letters or digits.",
    )


class CancelInput(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=[(reason, reason.replace("_", " ").capitalize()) for reason in CANCEL_REASONS],
        help_text="Why the purchase is cancelled.",
    )
    note = _note(required=False)


class RefundInput(serializers.Serializer):
    amount = _money("Amount to refund; at most the purchase total.")
    note = _note(required=False)


class CreateInput(serializers.Serializer):
    description = serializers.CharField(max_length=200, help_text="What is bought.")
    total = _money("Total in EUR, greater than 0.")
    customer = serializers.CharField(
        required=False, max_length=150, help_text="Username of the customer (staff only)."
    )


# --- rules ----------------------------------------------------------------------------


@condition("payment_not_authorized")
def payment_authorized(purchase: Purchase) -> bool:
    return purchase.payment_status == "authorized"


@condition("refund_window_expired")
def within_refund_window(purchase: Purchase) -> bool:
    if purchase.delivered_at is None:
        return False
    return timezone.now() - purchase.delivered_at <= REFUND_WINDOW


@guard("requires_supervisor")
def may_cancel_high_value(purchase: Purchase, user: Any) -> bool:
    return purchase.total <= HIGH_VALUE or user.has_perm("generic.cancel_high_value_purchase")


def is_customer(user: Any) -> bool:
    """Customers are the users who may not view every purchase."""
    return not user.has_perm("generic.view_purchase")


def cancel_constraints(purchase: Purchase, user: Any) -> dict[str, Any]:
    """Customers may only cite their own request; payment_failure needs a failed payment."""
    if is_customer(user):
        allowed = ["customer_request"]
    else:
        allowed = [
            reason
            for reason in CANCEL_REASONS
            if reason != "payment_failure" or purchase.payment_status == "failed"
        ]
    if allowed == list(CANCEL_REASONS):
        return {}
    return {"properties": {"reason": {"enum": allowed}}}


def refund_constraints(purchase: Purchase, user: Any) -> dict[str, Any]:
    """A refund never exceeds what was paid."""
    return {"properties": {"amount": {"maximum": purchase.total}}}


def create_constraints(purchase: None, user: Any) -> dict[str, Any]:
    """Customers buy for themselves; staff must say for whom."""
    if is_customer(user):
        return {"properties": {"customer": {"enum": [user.get_username()]}}}
    return {"required": ["customer"]}


ONLY_FROM_CONFIRMED = {
    S.PENDING: "not_confirmed",
    S.SHIPPED: "already_shipped",
    S.DELIVERED: "already_shipped",
    S.REFUNDED: "already_shipped",
    S.CANCELLED: "purchase_cancelled",
}


def _cancel_consequence(purchase: Purchase) -> str:
    return (
        f"Purchase #{purchase.pk} ({purchase.total} EUR) will be cancelled; this cannot be undone."
    )


def _refund_consequence(purchase: Purchase) -> str:
    return f"Purchase #{purchase.pk} will be refunded to {purchase.customer}."


# --- the model ------------------------------------------------------------------------


class Purchase(FSMModelMixin, models.Model):
    # A username, not a foreign key: this app has no migrations, and its tables are made
    # before auth's (PostgreSQL refuses a foreign key to a table not made yet).
    customer = models.CharField(max_length=150)
    description = models.CharField(max_length=200, blank=True, default="")
    total = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    payment_status = models.CharField(max_length=16, default="pending")
    status = FSMField(max_length=16, choices=Status.choices, default=S.PENDING, protected=True)
    version = models.PositiveIntegerField(default=1)
    tracking_number = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "generic"
        ordering = ["id"]
        permissions = [
            ("confirm_purchase", "Can confirm a purchase"),
            ("ship_purchase", "Can ship a purchase"),
            ("deliver_purchase", "Can mark a purchase delivered"),
            ("cancel_purchase", "Can cancel a purchase"),
            ("cancel_high_value_purchase", "Can cancel a purchase above 1000"),
            ("refund_purchase", "Can refund a delivered purchase"),
        ]

    def __str__(self) -> str:
        return f"Purchase #{self.pk} ({self.status})"

    @classmethod
    @creates(
        title="Create purchase",
        input=CreateInput,
        permission="generic.add_purchase",
        constraints=create_constraints,
    )
    def place(
        cls, *, user: Any, description: str, total: Decimal, customer: str | None = None
    ) -> Purchase:
        """Place a new purchase; it starts `pending` with its payment `authorized`."""
        if customer is None:
            customer = user.get_username()
        else:
            from django.contrib.auth import get_user_model

            owner = get_user_model().objects.filter(username=customer).first()
            if owner is None or not is_customer(owner):
                raise ValidationError({"customer": ["No customer with this username."]})
        return cls.objects.create(
            customer=customer, description=description, total=total, payment_status="authorized"
        )

    @operation(
        title="Confirm purchase",
        reasons={
            S.CONFIRMED: "already_confirmed",
            S.SHIPPED: "already_shipped",
            S.DELIVERED: "already_shipped",
            S.REFUNDED: "already_shipped",
            S.CANCELLED: "purchase_cancelled",
        },
        annotations={"idempotentHint": False, "destructiveHint": False},
    )
    @transition(
        field=status,
        source=S.PENDING,
        target=S.CONFIRMED,
        permission="generic.confirm_purchase",
        conditions=[payment_authorized],
    )
    def confirm(self) -> None:
        """Confirm a pending purchase so it may be shipped."""

    @operation(
        title="Ship purchase",
        input=ShipInput,
        reasons=ONLY_FROM_CONFIRMED,
        annotations={"destructiveHint": False},
    )
    @transition(
        field=status, source=S.CONFIRMED, target=S.SHIPPED, permission="generic.ship_purchase"
    )
    def ship(self, *, tracking_number: str) -> None:
        """Hand a confirmed purchase to the carrier with its tracking number."""
        self.tracking_number = tracking_number

    @operation(
        title="Mark purchase delivered",
        reasons={
            S.PENDING: "not_shipped",
            S.CONFIRMED: "not_shipped",
            S.DELIVERED: "already_delivered",
            S.REFUNDED: "already_delivered",
            S.CANCELLED: "purchase_cancelled",
        },
        annotations={"destructiveHint": False},
    )
    @transition(
        field=status, source=S.SHIPPED, target=S.DELIVERED, permission="generic.deliver_purchase"
    )
    def deliver(self) -> None:
        """Record that a shipped purchase arrived; this opens the refund window."""
        self.delivered_at = timezone.now()

    @operation(
        title="Cancel purchase",
        input=CancelInput,
        reasons={
            S.SHIPPED: "already_shipped",
            S.DELIVERED: "already_shipped",
            S.REFUNDED: "already_shipped",
            S.CANCELLED: "already_cancelled",
        },
        guards=[may_cancel_high_value],
        constraints=cancel_constraints,
        annotations={"destructiveHint": True},
        confirm=True,
        consequence=_cancel_consequence,
    )
    @transition(
        field=status,
        source=[S.PENDING, S.CONFIRMED],
        target=S.CANCELLED,
        permission="generic.cancel_purchase",
    )
    def cancel(self, *, reason: str, note: str = "") -> None:
        """Cancel a purchase before it ships; this cannot be undone."""

    @operation(
        title="Refund purchase",
        input=RefundInput,
        reasons={
            S.PENDING: "not_delivered",
            S.CONFIRMED: "not_delivered",
            S.SHIPPED: "not_delivered",
            S.REFUNDED: "already_refunded",
            S.CANCELLED: "purchase_cancelled",
        },
        constraints=refund_constraints,
        annotations={"destructiveHint": True},
        confirm=True,
        consequence=_refund_consequence,
    )
    @transition(
        field=status,
        source=S.DELIVERED,
        target=S.REFUNDED,
        permission="generic.refund_purchase",
        conditions=[within_refund_window],
    )
    def refund(self, *, amount: Decimal, note: str = "") -> None:
        """Refund a delivered purchase within 30 days of its delivery."""
