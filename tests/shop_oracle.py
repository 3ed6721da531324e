"""The role → operations oracle of the shop (``tests.generic.shop``), in one place.

Written from what the shop declares — its roles (``tests.shop_data.ROLES``), the state →
reason tables, the conditions, the guard, the precedence rule, and its purchases — as
data, never by asking the library which operations apply. The tests that compare a face
with that specification derive their expectations from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

# --- operations -------------------------------------------------------------------------

READS = ("get_purchase", "list_purchases")
CREATE = "create_purchase"
CREATE_TITLE = "Create purchase"


@dataclass(frozen=True)
class Transition:
    title: str
    sources: frozenset[str]
    segment: str  # the django-fsm method: the action route's last segment


# In declaration (catalog) order.
TRANSITIONS: dict[str, Transition] = {
    "confirm_purchase": Transition("Confirm purchase", frozenset({"pending"}), "confirm"),
    "ship_purchase": Transition("Ship purchase", frozenset({"confirmed"}), "ship"),
    "deliver_purchase": Transition("Mark purchase delivered", frozenset({"shipped"}), "deliver"),
    "cancel_purchase": Transition("Cancel purchase", frozenset({"pending", "confirmed"}), "cancel"),
    "refund_purchase": Transition("Refund purchase", frozenset({"delivered"}), "refund"),
}
# Every operation of the purchases, in catalog order.
OPERATIONS = (*READS, CREATE, *TRANSITIONS)
WITH_INPUTS = frozenset({"ship_purchase", "cancel_purchase", "refund_purchase"})
CANCEL_REASONS = ("customer_request", "payment_failure", "inventory_failure")

# --- roles ------------------------------------------------------------------------------

ROLES = ("admin", "support", "warehouse", "supervisor", "auditor", "alice", "bob")
STAFF = ("admin", "support", "warehouse", "supervisor", "auditor")
CUSTOMERS = ("alice", "bob")

# The capability to cancel a purchase over 1000 (the guard of cancel_purchase).
CANCEL_HIGH_VALUE = "cancel_high_value_purchase"
HIGH_VALUE_LIMIT = Decimal("1000")

# Per group: the transitions it holds, whether it may create (add_purchase), whether it may
# cancel high-value purchases. admin is a superuser and holds everything.
_GROUPS: dict[str, tuple[frozenset[str], bool, bool]] = {
    "customer": (frozenset({"cancel_purchase"}), True, False),
    "support": (frozenset({"confirm_purchase", "cancel_purchase"}), True, False),
    "warehouse": (frozenset({"ship_purchase", "deliver_purchase"}), False, False),
    "supervisor": (
        frozenset({"confirm_purchase", "cancel_purchase", "refund_purchase"}),
        False,
        True,
    ),
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
    """The operations ``role``'s catalog lists, in catalog order: the reads, create_purchase
    when it may create, its transitions."""
    return [*READS, *([CREATE] if may_create(role) else []), *transitions_of(role)]


def capabilities(role: str) -> frozenset[str]:
    """Every operation ``role`` may use, plus CANCEL_HIGH_VALUE when it holds that."""
    extra = {CANCEL_HIGH_VALUE} if may_cancel_high_value(role) else set()
    return frozenset({*catalog_of(role), *extra})


# --- the shop purchases ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    customer: str
    status: str
    total: Decimal
    payment: str
    tracking: str | None = None
    delivered_days_ago: int | None = None


# In table order: p-01 … p-12 (tests.shop_data.PURCHASES).
PURCHASES: dict[str, Row] = {
    "p-01": Row("alice", "pending", Decimal("250.00"), "authorized"),
    "p-02": Row("alice", "pending", Decimal("2500.00"), "authorized"),
    "p-03": Row("alice", "pending", Decimal("80.00"), "pending"),
    "p-04": Row("alice", "pending", Decimal("75.00"), "failed"),
    "p-05": Row("alice", "confirmed", Decimal("120.00"), "authorized"),
    "p-06": Row("alice", "shipped", Decimal("60.00"), "authorized", "TRK00000001"),
    "p-07": Row("alice", "delivered", Decimal("300.00"), "authorized", None, 3),
    "p-08": Row("alice", "delivered", Decimal("90.00"), "authorized", None, 45),
    "p-09": Row("alice", "cancelled", Decimal("40.00"), "authorized"),
    "p-10": Row("bob", "pending", Decimal("500.00"), "authorized"),
    "p-11": Row("bob", "confirmed", Decimal("1500.00"), "authorized"),
    "p-12": Row("bob", "shipped", Decimal("42.00"), "authorized", "TRK00000002"),
}


def can_see(role: str, key: str) -> bool:
    return role not in CUSTOMERS or PURCHASES[key].customer == role


def visible_keys(role: str) -> list[str]:
    return [key for key in PURCHASES if can_see(role, key)]


# --- what applies now ---------------------------------------------------------------------

# The state reasons (tests.generic.shop): the caller has the capability, the state is wrong.
STATE_REASONS: dict[str, dict[str, str]] = {
    "confirm_purchase": {
        "confirmed": "already_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "purchase_cancelled",
    },
    "ship_purchase": {
        "pending": "not_confirmed",
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "purchase_cancelled",
    },
    "deliver_purchase": {
        "pending": "not_shipped",
        "confirmed": "not_shipped",
        "delivered": "already_delivered",
        "refunded": "already_delivered",
        "cancelled": "purchase_cancelled",
    },
    "cancel_purchase": {
        "shipped": "already_shipped",
        "delivered": "already_shipped",
        "refunded": "already_shipped",
        "cancelled": "already_cancelled",
    },
    "refund_purchase": {
        "pending": "not_delivered",
        "confirmed": "not_delivered",
        "shipped": "not_delivered",
        "refunded": "already_refunded",
        "cancelled": "purchase_cancelled",
    },
}


def condition_reason(operation: str, row: Row) -> str | None:
    if operation == "confirm_purchase" and row.payment != "authorized":
        return "payment_not_authorized"
    if operation == "refund_purchase" and (
        row.delivered_days_ago is None or row.delivered_days_ago > 30
    ):
        return "refund_window_expired"
    return None


def guard_reason(operation: str, row: Row, role: str) -> str | None:
    if (
        operation == "cancel_purchase"
        and row.total > HIGH_VALUE_LIMIT
        and not may_cancel_high_value(role)
    ):
        return "requires_supervisor"
    return None


def oracle(role: str, key: str) -> tuple[list[str], dict[str, str]]:
    """(the transitions that apply now to shop purchase ``key`` for ``role``, in catalog
    purchase; {each other transition it holds: why not}). State first, then conditions,
    then guards."""
    row = PURCHASES[key]
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
    failed = PURCHASES[key].payment == "failed"
    return [r for r in CANCEL_REASONS if r != "payment_failure" or failed]
