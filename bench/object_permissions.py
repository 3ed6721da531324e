"""The object-permission rules ``make bench`` registers for its object-permissions table.

django-rules is the dev extra's (an object-permission backend, as a project has one), not
the demo's: it is imported only when the table runs, from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.test import override_settings

from orders.models import Order, PaymentStatus

__all__ = ["RULE_CALLS", "rules_backend"]

# The rules the object-permissions table registers (django-rules' own registry): each
# answers per order, and no without one — as a rule used with django-fsm must.
RULE_CALLS = [0]


def _rules() -> dict[str, Any]:
    import rules

    @rules.predicate
    def small_order(user: Any, order: Order | None) -> bool:
        RULE_CALLS[0] += 1
        return order is not None and order.total <= Decimal("600.00")

    @rules.predicate
    def paid_order(user: Any, order: Order | None) -> bool:
        RULE_CALLS[0] += 1
        return order is not None and order.payment_status == PaymentStatus.AUTHORIZED

    @rules.predicate
    def own_order(user: Any, order: Order | None) -> bool:
        RULE_CALLS[0] += 1
        return order is not None and order.customer_id == user.pk

    return {
        "orders.confirm_order": small_order,
        "orders.ship_order": paid_order,
        "orders.deliver_order": paid_order,
        "orders.cancel_order": small_order | own_order,
        "orders.refund_order": small_order,
    }


@contextmanager
def rules_backend() -> Iterator[None]:
    """django-rules' backend before the project's, with :func:`_rules` registered for
    the block (and whatever was registered under those names put back)."""
    import rules
    from rules.permissions import permissions

    registered = _rules()
    before = {name: permissions.get(name) for name in registered}
    for name, predicate in registered.items():
        rules.set_perm(name, predicate)
    backends = ["rules.permissions.ObjectPermissionBackend", *settings.AUTHENTICATION_BACKENDS]
    try:
        with override_settings(AUTHENTICATION_BACKENDS=backends):
            yield
    finally:
        for name, predicate in before.items():
            if predicate is None:
                rules.remove_perm(name)
            else:
                rules.set_perm(name, predicate)
