"""The order state machine of docs/demo.md#orders, exercised on the model itself (no API)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.utils import timezone
from django_fsm import TransitionNotAllowed, has_transition_perm

from demo_tests.conftest import Demo
from orders import rules
from orders.models import Order

STATES = ("pending", "confirmed", "shipped", "delivered", "refunded", "cancelled")

# Arguments each transition needs when called directly.
TRANSITION_KWARGS: dict[str, dict[str, Any]] = {
    "confirm": {},
    "ship": {"tracking_number": "ABCD1234"},
    "deliver": {},
    "cancel": {"reason": "customer_request"},
    "refund": {"amount": Decimal("10.00")},
}

# docs/demo.md#orders: the only (transition, source) pairs that are legal.
LEGAL = {
    ("confirm", "pending"): "confirmed",
    ("ship", "confirmed"): "shipped",
    ("deliver", "shipped"): "delivered",
    ("cancel", "pending"): "cancelled",
    ("cancel", "confirmed"): "cancelled",
    ("refund", "delivered"): "refunded",
}
ILLEGAL = [
    (name, state) for name in TRANSITION_KWARGS for state in STATES if (name, state) not in LEGAL
]


@pytest.fixture
def customer(db: None) -> AbstractUser:
    user = get_user_model().objects.create_user(username="carol", password="x")
    user.groups.add(Group.objects.get(name="customer"))
    return user


@pytest.fixture
def make_order(customer: AbstractUser) -> Callable[..., Order]:
    """An order born in any state, with every condition satisfied unless overridden."""

    def make(status: str = "pending", **fields: Any) -> Order:
        values: dict[str, Any] = {
            "customer": customer,
            "total": Decimal("250.00"),
            "payment_status": "authorized",
            "status": status,
        }
        if status in {"shipped", "delivered", "refunded"}:
            values["tracking_number"] = "TRK12345678"
        if status in {"delivered", "refunded"}:
            values["delivered_at"] = timezone.now() - timedelta(days=1)
        values.update(fields)
        return Order.objects.create(**values)

    return make


def fresh(order: Order) -> Order:
    return Order.objects.get(pk=order.pk)


# --- legal transitions ---------------------------------------------------------------


def test_confirm_moves_an_authorized_pending_order_to_confirmed(
    make_order: Callable[..., Order],
) -> None:
    order = make_order("pending")
    order.confirm()
    order.save()
    assert order.status == "confirmed"
    assert fresh(order).status == "confirmed"


def test_ship_moves_confirmed_to_shipped_and_records_tracking_number(
    make_order: Callable[..., Order],
) -> None:
    order = make_order("confirmed")
    order.ship(tracking_number="ABCD1234")
    order.save()
    stored = fresh(order)
    assert stored.status == "shipped"
    assert stored.tracking_number == "ABCD1234"


def test_deliver_moves_shipped_to_delivered_and_sets_delivered_at(
    make_order: Callable[..., Order],
) -> None:
    order = make_order("shipped")
    assert order.delivered_at is None
    before = timezone.now()
    order.deliver()
    order.save()
    after = timezone.now()
    stored = fresh(order)
    assert stored.status == "delivered"
    assert stored.delivered_at is not None
    assert before <= stored.delivered_at <= after


@pytest.mark.parametrize("source", ["pending", "confirmed"])
def test_cancel_moves_pending_or_confirmed_to_cancelled(
    make_order: Callable[..., Order], source: str
) -> None:
    order = make_order(source)
    order.cancel(reason="customer_request")
    order.save()
    assert fresh(order).status == "cancelled"


def test_cancel_accepts_a_note(make_order: Callable[..., Order]) -> None:
    order = make_order("pending")
    order.cancel(reason="inventory_failure", note="out of stock")
    assert order.status == "cancelled"


def test_refund_moves_a_recently_delivered_order_to_refunded(demo: Demo) -> None:
    order = demo.order("demo-07")  # delivered 3 days ago
    order.refund(amount=Decimal("10.00"))
    order.save()
    assert demo.order("demo-07").status == "refunded"


def test_full_life_cycle_pending_to_refunded(make_order: Callable[..., Order]) -> None:
    order = make_order("pending")
    order.confirm()
    order.ship(tracking_number="ZX9876543210")
    order.deliver()
    order.refund(amount=Decimal("250.00"))
    order.save()
    stored = fresh(order)
    assert stored.status == "refunded"
    assert stored.tracking_number == "ZX9876543210"
    assert stored.delivered_at is not None


# --- illegal transitions -------------------------------------------------------------


@pytest.mark.parametrize(("name", "state"), ILLEGAL, ids=[f"{n}-from-{s}" for n, s in ILLEGAL])
def test_transition_from_wrong_state_is_refused_and_leaves_state(
    make_order: Callable[..., Order], name: str, state: str
) -> None:
    order = make_order(state)
    method = getattr(order, name)
    with pytest.raises(TransitionNotAllowed):
        method(**TRANSITION_KWARGS[name])
    assert order.status == state
    order.save()
    assert fresh(order).status == state


@pytest.mark.parametrize(("name", "state"), sorted(LEGAL), ids=[f"{n}-{s}" for n, s in LEGAL])
def test_every_legal_pair_is_allowed_by_the_state_machine(
    make_order: Callable[..., Order], name: str, state: str
) -> None:
    order = make_order(state)
    getattr(order, name)(**TRANSITION_KWARGS[name])
    assert order.status == LEGAL[(name, state)]


# --- conditions ----------------------------------------------------------------------


@pytest.mark.parametrize("payment_status", ["pending", "failed"])
def test_confirm_needs_an_authorized_payment(
    make_order: Callable[..., Order], payment_status: str
) -> None:
    order = make_order("pending", payment_status=payment_status)
    with pytest.raises(TransitionNotAllowed):
        order.confirm()
    assert order.status == "pending"
    assert fresh(order).status == "pending"


def test_confirm_of_demo_order_with_pending_payment_is_refused(demo: Demo) -> None:
    order = demo.order("demo-03")  # payment pending
    with pytest.raises(TransitionNotAllowed):
        order.confirm()
    assert demo.order("demo-03").status == "pending"


def test_refund_after_the_30_day_window_is_refused(demo: Demo) -> None:
    order = demo.order("demo-08")  # delivered 45 days ago
    with pytest.raises(TransitionNotAllowed):
        order.refund(amount=Decimal("10.00"))
    assert order.status == "delivered"
    assert demo.order("demo-08").status == "delivered"


@pytest.mark.parametrize(("days", "allowed"), [(29, True), (31, False)])
def test_refund_window_is_30_days(
    make_order: Callable[..., Order], days: int, allowed: bool
) -> None:
    order = make_order("delivered", delivered_at=timezone.now() - timedelta(days=days))
    assert rules.within_refund_window(order) is allowed


def test_refund_without_delivery_time_is_refused(make_order: Callable[..., Order]) -> None:
    order = make_order("delivered", delivered_at=None)
    with pytest.raises(TransitionNotAllowed):
        order.refund(amount=Decimal("1.00"))
    assert order.status == "delivered"


def test_payment_condition_reads_the_payment_status(make_order: Callable[..., Order]) -> None:
    assert rules.payment_authorized(make_order(payment_status="authorized")) is True
    assert rules.payment_authorized(make_order(payment_status="pending")) is False
    assert rules.payment_authorized(make_order(payment_status="failed")) is False


# --- guards and constraints ----------------------------------------------------------


def _user(username: str) -> AbstractUser:
    return get_user_model().objects.get(username=username)


@pytest.mark.parametrize(
    ("username", "allowed"),
    [("support", False), ("alice", False), ("supervisor", True), ("admin", True)],
)
def test_cancelling_above_1000_needs_the_high_value_permission(
    demo: Demo, username: str, allowed: bool
) -> None:
    high_value = demo.order("demo-02")  # 2500.00
    assert rules.may_cancel_high_value(high_value, _user(username)) is allowed


def test_cancelling_at_or_below_1000_needs_no_extra_permission(
    demo: Demo, make_order: Callable[..., Order]
) -> None:
    support = _user("support")
    assert rules.may_cancel_high_value(demo.order("demo-01"), support) is True
    assert rules.may_cancel_high_value(make_order(total=Decimal("1000.00")), support) is True
    assert rules.may_cancel_high_value(make_order(total=Decimal("1000.01")), support) is False


def test_customers_may_cancel_only_for_customer_request(demo: Demo) -> None:
    alice = _user("alice")
    for key in ("demo-01", "demo-04"):
        constraints = rules.cancel_constraints(demo.order(key), alice)
        assert constraints == {"properties": {"reason": {"enum": ["customer_request"]}}}


def test_staff_may_give_payment_failure_only_when_payment_failed(demo: Demo) -> None:
    support = _user("support")
    authorized = rules.cancel_constraints(demo.order("demo-01"), support)
    assert authorized["properties"]["reason"]["enum"] == ["customer_request", "inventory_failure"]
    failed = rules.cancel_constraints(demo.order("demo-04"), support)  # payment failed
    enum = failed.get("properties", {}).get("reason", {}).get("enum")
    assert enum is None or set(enum) == {"customer_request", "payment_failure", "inventory_failure"}


def test_refund_amount_is_capped_at_the_total(demo: Demo) -> None:
    constraints = rules.refund_constraints(demo.order("demo-07"), _user("supervisor"))
    assert Decimal(str(constraints["properties"]["amount"]["maximum"])) == Decimal("300.00")


# --- protected status ----------------------------------------------------------------


@pytest.mark.parametrize("target", ["confirmed", "shipped", "pending"])
def test_direct_assignment_to_status_is_refused(
    make_order: Callable[..., Order], target: str
) -> None:
    order = make_order("pending")
    with pytest.raises(AttributeError):
        order.status = target
    assert fresh(order).status == "pending"


def test_direct_assignment_is_refused_on_a_loaded_order(demo: Demo) -> None:
    order = demo.order("demo-09")  # cancelled
    with pytest.raises(AttributeError):
        order.status = "pending"
    assert demo.order("demo-09").status == "cancelled"


def test_refresh_from_db_still_works_on_the_protected_field(
    make_order: Callable[..., Order],
) -> None:
    order = make_order("pending")
    other = fresh(order)
    other.confirm()
    other.save()
    order.refresh_from_db()
    assert order.status == "confirmed"


# --- permissions per group (docs/demo.md#orders, the roles) -----------------------

PERMISSIONS = (
    "confirm_order",
    "ship_order",
    "deliver_order",
    "cancel_order",
    "cancel_high_value_order",
    "refund_order",
    "view_order",
)
GRANTED: dict[str, set[str]] = {
    "admin": set(PERMISSIONS),
    "support": {"view_order", "confirm_order", "cancel_order"},
    "warehouse": {"view_order", "ship_order", "deliver_order"},
    "supervisor": {
        "view_order",
        "confirm_order",
        "cancel_order",
        "cancel_high_value_order",
        "refund_order",
    },
    "auditor": {"view_order"},
    "alice": {"cancel_order"},
    "bob": {"cancel_order"},
}
CASES = [(role, perm) for role in GRANTED for perm in PERMISSIONS]


@pytest.mark.parametrize(("role", "perm"), CASES, ids=[f"{r}-{p}" for r, p in CASES])
def test_role_has_exactly_the_capabilities_of_its_group(demo: Demo, role: str, perm: str) -> None:
    user = _user(role)  # fresh object: Django caches permissions on the user
    assert user.has_perm(f"orders.{perm}") is (perm in GRANTED[role])


def test_admin_is_a_superuser(demo: Demo) -> None:
    admin = _user("admin")
    assert admin.is_superuser
    assert admin.is_staff


@pytest.mark.parametrize("role", ["alice", "bob"])
def test_customers_are_not_staff(demo: Demo, role: str) -> None:
    user = _user(role)
    assert not user.is_staff
    assert not user.is_superuser
    assert list(user.groups.values_list("name", flat=True)) == ["customer"]


@pytest.mark.parametrize(
    ("role", "transition", "key", "allowed"),
    [
        ("support", "confirm", "demo-01", True),
        ("warehouse", "confirm", "demo-01", False),
        ("warehouse", "ship", "demo-05", True),
        ("support", "ship", "demo-05", False),
        ("warehouse", "deliver", "demo-06", True),
        ("auditor", "deliver", "demo-06", False),
        ("alice", "cancel", "demo-01", True),
        ("warehouse", "cancel", "demo-01", False),
        ("supervisor", "refund", "demo-07", True),
        ("support", "refund", "demo-07", False),
    ],
)
def test_transition_permission_follows_the_group(
    demo: Demo, role: str, transition: str, key: str, allowed: bool
) -> None:
    order = demo.order(key)
    assert has_transition_perm(getattr(order, transition), _user(role)) is allowed
