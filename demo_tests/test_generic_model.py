"""The tests' ``Ticket`` registered beside the demo's models: its operations come after
the orders' in the catalog, and a user's catalog mixes both (the library's own tests of
the ticket are tests/test_generic_model.py).
"""

from __future__ import annotations

import pytest

from affordances.catalog import get_catalog
from tests.test_generic_model import TICKET_OPERATIONS, _fresh, _grant_escalate, with_ticket

ORDER_OPERATIONS = [
    "get_order",
    "list_orders",
    "create_order",
    "confirm_order",
    "ship_order",
    "deliver_order",
    "cancel_order",
    "refund_order",
]

__all__ = ["with_ticket"]


def _names(operations) -> list[str]:
    # The demo's second domain (procurement) is registered too; these tests are about
    # orders and the ticket, so its operations are left out.
    return [op.name for op in operations if op.resource.name != "purchase_request"]


def test_ticket_is_not_in_the_demo_catalog_unless_registered():
    assert _names(get_catalog()) == ORDER_OPERATIONS


def test_registering_ticket_adds_its_reads_and_transitions_after_the_orders(with_ticket):
    assert _names(get_catalog()) == ORDER_OPERATIONS + TICKET_OPERATIONS


@pytest.mark.django_db
def test_a_customer_granted_escalate_sees_her_order_operations_and_the_tickets(demo, with_ticket):
    _grant_escalate("alice")

    assert _names(get_catalog().for_user(_fresh("alice"))) == [
        "get_order",
        "list_orders",
        "create_order",
        "cancel_order",
        *TICKET_OPERATIONS,
    ]
