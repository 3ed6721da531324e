"""The demo domain: an order and its life cycle as a django-fsm state machine."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django_fsm import FSMField, FSMModelMixin, transition

from affordances import creates, operation
from orders import inputs, rules


class OrderStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    CONFIRMED = "confirmed", "Confirmed"
    SHIPPED = "shipped", "Shipped"
    DELIVERED = "delivered", "Delivered"
    REFUNDED = "refunded", "Refunded"
    CANCELLED = "cancelled", "Cancelled"


class PaymentStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    AUTHORIZED = "authorized", "Authorized"
    FAILED = "failed", "Failed"


S = OrderStatus

# Why an operation that starts from `confirmed` does not apply in the other states.
ONLY_FROM_CONFIRMED = {
    S.PENDING: "not_confirmed",
    S.SHIPPED: "already_shipped",
    S.DELIVERED: "already_shipped",
    S.REFUNDED: "already_shipped",
    S.CANCELLED: "order_cancelled",
}


# What the person confirms (docs/protocol.md#confirmations): the order as they know it.
def _cancel_consequence(order: Order) -> str:
    what = order.description or "no description"
    return (
        f"Order #{order.pk} ({order.total} {order.currency}, {what}) will be cancelled; "
        "this cannot be undone."
    )


def _refund_consequence(order: Order) -> str:
    return (
        f"Order #{order.pk} ({order.total} {order.currency}) will be refunded to "
        f"{order.customer}; the money cannot be taken back."
    )


class Order(FSMModelMixin, models.Model):
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders"
    )
    description = models.CharField(max_length=200, blank=True, default="")
    total = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    currency = models.CharField(max_length=3, default="EUR")
    payment_status = models.CharField(
        max_length=16, choices=PaymentStatus.choices, default=PaymentStatus.PENDING
    )
    status = FSMField(
        max_length=16, choices=OrderStatus.choices, default=OrderStatus.PENDING, protected=True
    )
    version = models.PositiveIntegerField(default=1)
    tracking_number = models.CharField(max_length=20, null=True, blank=True)  # noqa: DJ001
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["customer", "status"])]
        permissions = [
            ("confirm_order", "Can confirm an order"),
            ("ship_order", "Can ship an order"),
            ("deliver_order", "Can mark an order delivered"),
            ("cancel_order", "Can cancel an order"),
            ("cancel_high_value_order", "Can cancel an order above 1000"),
            ("refund_order", "Can refund a delivered order"),
        ]

    def __str__(self) -> str:
        return f"Order #{self.pk} ({self.status})"

    @classmethod
    @creates(
        title="Create order",
        input=inputs.CreateOrderInput,
        permission="orders.add_order",
        constraints=rules.create_constraints,
    )
    def place(
        cls, *, user: Any, description: str, total: Decimal, customer: str | None = None
    ) -> Order:
        """Place a new order; it starts `pending` with its payment `authorized`.

        Arguments: `description` (required, at most 200 characters), `total` (required,
        greater than 0) and, for staff only, `customer` (the customer's username;
        customers always order for themselves). Requires the `orders.add_order`
        permission.
        """
        if customer is None:
            owner = user
        else:
            owner = get_user_model().objects.filter(username=customer).first()
            if owner is None or not rules.is_customer(owner):
                raise ValidationError({"customer": ["No customer with this username."]})
        return cls.objects.create(
            customer=owner,
            description=description,
            total=total,
            payment_status=PaymentStatus.AUTHORIZED,
        )

    @operation(
        title="Confirm order",
        reasons={
            S.CONFIRMED: "already_confirmed",
            S.SHIPPED: "already_shipped",
            S.DELIVERED: "already_shipped",
            S.REFUNDED: "already_shipped",
            S.CANCELLED: "order_cancelled",
        },
        annotations={"idempotentHint": False, "destructiveHint": False},
    )
    @transition(
        field=status,
        source=S.PENDING,
        target=S.CONFIRMED,
        permission="orders.confirm_order",
        conditions=[rules.payment_authorized],
    )
    def confirm(self) -> None:
        """Confirm a pending order so the warehouse may ship it.

        Use this once the customer's payment is authorized: confirming commits the shop
        to fulfil the order, after which it can be shipped or still cancelled.
        Takes no arguments. Only possible from `pending`, and only when the payment is
        authorized (otherwise the reason is `payment_not_authorized`).
        Requires the `orders.confirm_order` permission.
        """

    @operation(
        title="Ship order",
        input=inputs.ShipOrderInput,
        reasons=ONLY_FROM_CONFIRMED,
        annotations={"destructiveHint": False},
    )
    @transition(field=status, source=S.CONFIRMED, target=S.SHIPPED, permission="orders.ship_order")
    def ship(self, *, tracking_number: str) -> None:
        """Hand a confirmed order to the carrier and record its tracking number.

        After shipping the order can no longer be cancelled; it waits to be delivered.
        Argument `trackingNumber` (required): the carrier's tracking number, 8 to 20
        capital letters or digits. Only possible from `confirmed`.
        Requires the `orders.ship_order` permission.
        """
        self.tracking_number = tracking_number

    @operation(
        title="Mark order delivered",
        reasons={
            S.PENDING: "not_shipped",
            S.CONFIRMED: "not_shipped",
            S.DELIVERED: "already_delivered",
            S.REFUNDED: "already_delivered",
            S.CANCELLED: "order_cancelled",
        },
        annotations={"destructiveHint": False},
    )
    @transition(
        field=status, source=S.SHIPPED, target=S.DELIVERED, permission="orders.deliver_order"
    )
    def deliver(self) -> None:
        """Record that a shipped order reached the customer.

        Sets the delivery time to now, which opens the 30-day refund window.
        Takes no arguments. Only possible from `shipped`.
        Requires the `orders.deliver_order` permission.
        """
        self.delivered_at = timezone.now()

    @operation(
        title="Cancel order",
        input=inputs.CancelOrderInput,
        reasons={
            S.SHIPPED: "already_shipped",
            S.DELIVERED: "already_shipped",
            S.REFUNDED: "already_shipped",
            S.CANCELLED: "already_cancelled",
        },
        guards=[rules.may_cancel_high_value],
        constraints=rules.cancel_constraints,
        annotations={"destructiveHint": True},
        confirm=True,
        consequence=_cancel_consequence,
    )
    @transition(
        field=status,
        source=[S.PENDING, S.CONFIRMED],
        target=S.CANCELLED,
        permission="orders.cancel_order",
    )
    def cancel(self, *, reason: str, note: str = "") -> None:
        """Cancel an order before fulfilment begins; this cannot be undone.

        Argument `reason` (required): `customer_request`, `payment_failure` (only when
        the payment failed) or `inventory_failure`; customers may only give
        `customer_request`. Argument `note` (optional): free text for the record.
        Only possible from `pending` or `confirmed`. Orders above 1000 need the
        `orders.cancel_high_value_order` permission too (reason `requires_supervisor`).
        Requires the `orders.cancel_order` permission.
        """

    @operation(
        title="Refund order",
        input=inputs.RefundOrderInput,
        reasons={
            S.PENDING: "not_delivered",
            S.CONFIRMED: "not_delivered",
            S.SHIPPED: "not_delivered",
            S.REFUNDED: "already_refunded",
            S.CANCELLED: "order_cancelled",
        },
        constraints=rules.refund_constraints,
        annotations={"destructiveHint": True},
        confirm=True,
        consequence=_refund_consequence,
    )
    @transition(
        field=status,
        source=S.DELIVERED,
        target=S.REFUNDED,
        permission="orders.refund_order",
        conditions=[rules.within_refund_window],
    )
    def refund(self, *, amount: Decimal, note: str = "") -> None:
        """Refund a delivered order to the customer; this ends its life cycle.

        Argument `amount` (required): the sum to pay back, greater than 0 and at most
        the order total, in cents precision. Argument `note` (optional): free text.
        Only possible from `delivered` and within 30 days of delivery (reason
        `refund_window_expired` afterwards). Requires the `orders.refund_order`
        permission.
        """

    # Declared last so the catalog order of the others never moves. It exists only while
    # settings.ORDERS_ENABLE_HOLD is on: the experiment's "new operation" (task N1).
    @operation(
        title="Hold order",
        input=inputs.HoldOrderInput,
        reasons=ONLY_FROM_CONFIRMED,
        annotations={"destructiveHint": False},
        enabled_by="ORDERS_ENABLE_HOLD",
    )
    @transition(
        field=status, source=S.CONFIRMED, target=S.CONFIRMED, permission="orders.confirm_order"
    )
    def hold(self, *, note: str) -> None:
        """Put a confirmed order on hold for a manual check before the warehouse ships it.

        The status stays `confirmed`; the hold and its note are recorded in the order's
        history, and the version changes. Argument `note` (required): what must be checked.
        Only possible from `confirmed`. Requires the `orders.confirm_order` permission
        (whoever may confirm an order may hold it).
        """
