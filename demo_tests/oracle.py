"""The role → operations oracle of the demo's orders, in one place.

Written from the specification of the demo (docs/demo.md#orders: the groups and their
capabilities, the state → reason tables, the conditions, the guard and the precedence
rule, and the demo data) — never from the application's code, and never by asking the
application which operations apply. Every test that compares a face with the
specification derives its expectations from here: the catalog per role, the affordances
of each order, the HAL-FORMS templates, the admin's buttons, the MCP tools, the leak
matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# --- operations -------------------------------------------------------------------------

READS = ("get_order", "list_orders")
CREATE = "create_order"
CREATE_TITLE = "Create order"


@dataclass(frozen=True)
class Transition:
    title: str
    sources: frozenset[str]
    segment: str  # the django-fsm method: the action route's last segment


# In declaration (catalog) order.
TRANSITIONS: dict[str, Transition] = {
    "confirm_order": Transition("Confirm order", frozenset({"pending"}), "confirm"),
    "ship_order": Transition("Ship order", frozenset({"confirmed"}), "ship"),
    "deliver_order": Transition("Mark order delivered", frozenset({"shipped"}), "deliver"),
    "cancel_order": Transition("Cancel order", frozenset({"pending", "confirmed"}), "cancel"),
    "refund_order": Transition("Refund order", frozenset({"delivered"}), "refund"),
}
# Every operation of the orders, in catalog order.
OPERATIONS = (*READS, CREATE, *TRANSITIONS)
WITH_INPUTS = frozenset({"ship_order", "cancel_order", "refund_order"})
CANCEL_REASONS = ("customer_request", "payment_failure", "inventory_failure")

# --- roles ------------------------------------------------------------------------------

ROLES = ("admin", "support", "warehouse", "supervisor", "auditor", "alice", "bob")
STAFF = ("admin", "support", "warehouse", "supervisor", "auditor")
CUSTOMERS = ("alice", "bob")

# The capability to cancel an order over 1000 (the guard of cancel_order).
CANCEL_HIGH_VALUE = "cancel_high_value_order"
HIGH_VALUE_LIMIT = Decimal("1000")

# Per group: the transitions it holds, whether it may create (add_order), whether it may
# cancel high-value orders. admin is a superuser and holds everything.
_GROUPS: dict[str, tuple[frozenset[str], bool, bool]] = {
    "customer": (frozenset({"cancel_order"}), True, False),
    "support": (frozenset({"confirm_order", "cancel_order"}), True, False),
    "warehouse": (frozenset({"ship_order", "deliver_order"}), False, False),
    "supervisor": (frozenset({"confirm_order", "cancel_order", "refund_order"}), False, True),
    "auditor": (frozenset(), False, False),
}
ROLE_GROUP = {
    "support": "support",
    "warehouse": "warehouse",
    "supervisor": "supervisor",
    "auditor": "auditor",
    "alice": "customer",
    "bob": "customer",
}


def transitions_of(role: str) -> list[str]:
    """The transitions ``role`` has the capability for, in catalog order."""
    if role == "admin":
        return list(TRANSITIONS)
    held = _GROUPS[ROLE_GROUP[role]][0]
    return [name for name in TRANSITIONS if name in held]


def may_create(role: str) -> bool:
    return role == "admin" or _GROUPS[ROLE_GROUP[role]][1]


def may_cancel_high_value(role: str) -> bool:
    return role == "admin" or _GROUPS[ROLE_GROUP[role]][2]


def catalog_of(role: str) -> list[str]:
    """The operations ``role``'s catalog lists, in catalog order: the reads, create_order
    when it may create, its transitions."""
    return [*READS, *([CREATE] if may_create(role) else []), *transitions_of(role)]


def capabilities(role: str) -> frozenset[str]:
    """Every operation ``role`` may use, plus CANCEL_HIGH_VALUE when it holds that."""
    extra = {CANCEL_HIGH_VALUE} if may_cancel_high_value(role) else set()
    return frozenset({*catalog_of(role), *extra})


# --- the demo orders ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    customer: str
    status: str
    total: Decimal
    payment: str
    tracking: str | None = None
    delivered_days_ago: int | None = None


# In table order: demo-01 … demo-12.
DEMO: dict[str, Row] = {
    "demo-01": Row("alice", "pending", Decimal("250.00"), "authorized"),
    "demo-02": Row("alice", "pending", Decimal("2500.00"), "authorized"),
    "demo-03": Row("alice", "pending", Decimal("80.00"), "pending"),
    "demo-04": Row("alice", "pending", Decimal("75.00"), "failed"),
    "demo-05": Row("alice", "confirmed", Decimal("120.00"), "authorized"),
    "demo-06": Row("alice", "shipped", Decimal("60.00"), "authorized", "TRK00000001"),
    "demo-07": Row("alice", "delivered", Decimal("300.00"), "authorized", None, 3),
    "demo-08": Row("alice", "delivered", Decimal("90.00"), "authorized", None, 45),
    "demo-09": Row("alice", "cancelled", Decimal("40.00"), "authorized"),
    "demo-10": Row("bob", "pending", Decimal("500.00"), "authorized"),
    "demo-11": Row("bob", "confirmed", Decimal("1500.00"), "authorized"),
    "demo-12": Row("bob", "shipped", Decimal("42.00"), "authorized", "TRK00000002"),
}


def can_see(role: str, key: str) -> bool:
    return role not in CUSTOMERS or DEMO[key].customer == role


def visible_keys(role: str) -> list[str]:
    return [key for key in DEMO if can_see(role, key)]


# --- what applies now ---------------------------------------------------------------------

# docs/demo.md#orders, the state reasons: the caller has the capability, the state is wrong.
STATE_REASONS: dict[str, dict[str, str]] = {
    "confirm_order": {
        "confirmed": "already_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "order_cancelled",
    },
    "ship_order": {
        "pending": "not_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "order_cancelled",
    },
    "deliver_order": {
        "pending": "not_shipped",
        "confirmed": "not_shipped",
        "delivered": "already_delivered",
        "refunded": "already_delivered",
        "cancelled": "order_cancelled",
    },
    "cancel_order": {
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "already_cancelled",
    },
    "refund_order": {
        "pending": "not_delivered",
        "confirmed": "not_delivered",
        "shipped": "not_delivered",
        "refunded": "already_refunded",
        "cancelled": "order_cancelled",
    },
}


def condition_reason(operation: str, row: Row) -> str | None:
    if operation == "confirm_order" and row.payment != "authorized":
        return "payment_not_authorized"
    if operation == "refund_order" and (
        row.delivered_days_ago is None or row.delivered_days_ago > 30
    ):
        return "refund_window_expired"
    return None


def guard_reason(operation: str, row: Row, role: str) -> str | None:
    if (
        operation == "cancel_order"
        and row.total > HIGH_VALUE_LIMIT
        and not may_cancel_high_value(role)
    ):
        return "requires_supervisor"
    return None


def oracle(role: str, key: str) -> tuple[list[str], dict[str, str]]:
    """(the transitions that apply now to demo order ``key`` for ``role``, in catalog
    order; {each other transition it holds: why not}). State first, then conditions,
    then guards."""
    row = DEMO[key]
    available: list[str] = []
    unavailable: dict[str, str] = {}
    for name in transitions_of(role):
        if row.status not in TRANSITIONS[name].sources:
            reason: str | None = STATE_REASONS[name][row.status]
        else:
            reason = condition_reason(name, row) or guard_reason(name, row, role)
        if reason is None:
            available.append(name)
        else:
            unavailable[name] = reason
    return available, unavailable


def allowed_cancel_reasons(role: str, key: str) -> list[str]:
    """The cancel constraint: customers only customer_request; payment_failure only when
    the payment failed."""
    if role in CUSTOMERS:
        return ["customer_request"]
    failed = DEMO[key].payment == "failed"
    return [r for r in CANCEL_REASONS if r != "payment_failure" or failed]


# --- MCP tool lists -----------------------------------------------------------------------

PROCUREMENT_SUFFIXES = ("_purchase_request", "_purchase_requests")
# Exactly the transitions each role has the capability for, in catalog order.
TRANSITIONS_BY_ROLE = {role: transitions_of(role) for role in ROLES}


def orders_part(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The orders' tools of a list, in order: compared to the unchanged golden file."""
    return [tool for tool in tools if not tool["name"].endswith(PROCUREMENT_SUFFIXES)]


def procurement_part(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [tool for tool in tools if tool["name"].endswith(PROCUREMENT_SUFFIXES)]


def assert_role_tools(role: str, names: list[str], catalog: list[str]) -> None:
    """A role's tools are its catalog (GET /api/operations/), exactly and in order: the
    two reads first, then precisely its transitions (plus any collection operation the
    catalog grants it)."""
    assert names == catalog
    assert names[:2] == list(READS)
    assert [name for name in names if name in TRANSITIONS] == TRANSITIONS_BY_ROLE[role]
