"""Business rules of an order that are not states: conditions, guards, constraints.

Each rule carries the machine reason reported when it fails (docs/demo.md#orders), so the
affordances layer can say *why* an operation does not apply without knowing orders.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from affordances import condition, guard

if TYPE_CHECKING:
    from orders.models import Order

HIGH_VALUE_THRESHOLD = Decimal("1000.00")
REFUND_WINDOW = timedelta(days=30)

CANCEL_REASONS = ("customer_request", "payment_failure", "inventory_failure")


@condition("payment_not_authorized")
def payment_authorized(order: Order) -> bool:
    return order.payment_status == "authorized"


@condition("refund_window_expired")
def within_refund_window(order: Order) -> bool:
    if order.delivered_at is None:
        return False
    return timezone.now() - order.delivered_at <= REFUND_WINDOW


@guard("requires_supervisor")
def may_cancel_high_value(order: Order, user: Any) -> bool:
    if order.total <= HIGH_VALUE_THRESHOLD:
        return True
    return user.has_perm("orders.cancel_high_value_order")


def is_customer(user: Any) -> bool:
    """Customers are the users who may not view every order."""
    return not user.has_perm("orders.view_order")


def cancel_constraints(order: Order, user: Any) -> dict[str, Any]:
    """Customers may only cite their own request; payment_failure needs a failed payment."""
    if is_customer(user):
        allowed = ["customer_request"]
    else:
        allowed = [
            reason
            for reason in CANCEL_REASONS
            if reason != "payment_failure" or order.payment_status == "failed"
        ]
    if list(allowed) == list(CANCEL_REASONS):
        return {}
    return {"properties": {"reason": {"enum": allowed}}}


def refund_constraints(order: Order, user: Any) -> dict[str, Any]:
    """A refund never exceeds what was paid."""
    return {"properties": {"amount": {"maximum": order.total}}}


def create_constraints(order: None, user: Any) -> dict[str, Any]:
    """Customers order for themselves; staff must say for whom."""
    if is_customer(user):
        return {"properties": {"customer": {"enum": [user.get_username()]}}}
    return {"required": ["customer"]}
