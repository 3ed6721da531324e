"""``manage.py seed_demo`` (docs/demo.md#configuration, docs/demo.md#demo-data) and the groups a
fresh database has (docs/demo.md#orders)."""

from __future__ import annotations

import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.core.management import call_command
from django.utils import timezone

from orders.models import Order
from procurement.demo import DEMO_USERS as PROCUREMENT_USERS

PASSWORD = "xylophone-seed-42"
USERS = ("admin", "support", "warehouse", "supervisor", "auditor", "alice", "bob")
STAFF_GROUPS = {
    "support": "support",
    "warehouse": "warehouse",
    "supervisor": "supervisor",
    "auditor": "auditor",
    "alice": "customer",
    "bob": "customer",
}

# docs/demo.md#demo-data, row by row: customer, status, total, paymentStatus, tracking, delivered
# days ago.
TABLE: list[tuple[str, str, str, str, str | None, int | None]] = [
    ("alice", "pending", "250.00", "authorized", None, None),
    ("alice", "pending", "2500.00", "authorized", None, None),
    ("alice", "pending", "80.00", "pending", None, None),
    ("alice", "pending", "75.00", "failed", None, None),
    ("alice", "confirmed", "120.00", "authorized", None, None),
    ("alice", "shipped", "60.00", "authorized", "TRK00000001", None),
    ("alice", "delivered", "300.00", "authorized", None, 3),
    ("alice", "delivered", "90.00", "authorized", None, 45),
    ("alice", "cancelled", "40.00", "authorized", None, None),
    ("bob", "pending", "500.00", "authorized", None, None),
    ("bob", "confirmed", "1500.00", "authorized", None, None),
    ("bob", "shipped", "42.00", "authorized", "TRK00000002", None),
]


@pytest.fixture(autouse=True)
def _as_migrations_leave_it(db: None) -> None:
    """These tests run the command on a database as its migrations leave it. The suite
    seeds the demo once for every other test (demo_tests/conftest.py), so that is undone
    here, inside the test's transaction (rolled back with it)."""
    from procurement.models import PurchaseRequest
    from procurement.reference import CostCenter, FreezePeriod, Supplier

    for model in (PurchaseRequest, FreezePeriod, CostCenter, Supplier, Order):
        model.objects.all().delete()
    get_user_model().objects.filter(username__in=(*USERS, *PROCUREMENT_USERS)).delete()


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def rows() -> list[tuple[str, str, Decimal, str, str | None]]:
    return [
        (o.customer.username, o.status, o.total, o.payment_status, o.tracking_number)
        for o in Order.objects.select_related("customer").order_by("id")
    ]


def expected_rows() -> list[tuple[str, str, Decimal, str, str | None]]:
    return [(c, s, Decimal(t), p, trk) for c, s, t, p, trk, _ in TABLE]


def user(username: str) -> AbstractUser:
    return get_user_model().objects.get(username=username)


# --- what it creates -----------------------------------------------------------------


@pytest.mark.django_db
def test_seed_creates_the_seven_demo_users() -> None:
    seed("--password", PASSWORD)
    usernames = set(get_user_model().objects.values_list("username", flat=True))
    # The orders' seven, and procurement's (tests/test_procurement_seed.py).
    assert usernames == set(USERS) | set(PROCUREMENT_USERS)
    admin = user("admin")
    assert admin.is_superuser
    assert admin.is_staff
    for username, group in STAFF_GROUPS.items():
        member = user(username)
        assert not member.is_superuser
        assert list(member.groups.values_list("name", flat=True)) == [group]


@pytest.mark.django_db
def test_staff_roles_may_use_the_admin_and_customers_may_not() -> None:
    seed("--password", PASSWORD)
    for username in ("support", "warehouse", "supervisor", "auditor"):
        assert user(username).is_staff
    for username in ("alice", "bob"):
        assert not user(username).is_staff


@pytest.mark.django_db
def test_seed_creates_the_twelve_orders_of_the_table() -> None:
    seed("--password", PASSWORD)
    assert rows() == expected_rows()
    assert set(Order.objects.values_list("currency", flat=True)) == {"EUR"}


@pytest.mark.django_db
def test_seeded_orders_are_at_their_first_version() -> None:
    seed("--password", PASSWORD)
    assert set(Order.objects.values_list("version", flat=True)) == {1}


@pytest.mark.django_db
def test_delivered_dates_are_relative_to_now() -> None:
    seed("--password", PASSWORD)
    now = timezone.now()
    orders = list(Order.objects.order_by("id"))
    for order, (*_, days) in zip(orders, TABLE, strict=True):
        if days is None:
            assert order.delivered_at is None, order
        else:
            assert order.delivered_at is not None
            assert abs(order.delivered_at - (now - timedelta(days=days))) < timedelta(minutes=1)


# --- idempotence and reset -----------------------------------------------------------


@pytest.mark.django_db
def test_running_twice_keeps_users_and_does_not_duplicate_orders() -> None:
    seed("--password", PASSWORD)
    user_ids = dict(get_user_model().objects.values_list("username", "pk"))
    order_ids = list(Order.objects.order_by("id").values_list("pk", flat=True))

    seed("--password", PASSWORD)

    assert dict(get_user_model().objects.values_list("username", "pk")) == user_ids
    assert Order.objects.count() == 12
    assert list(Order.objects.order_by("id").values_list("pk", flat=True)) == order_ids
    assert rows() == expected_rows()


@pytest.mark.django_db
def test_running_twice_keeps_each_user_in_one_group() -> None:
    seed("--password", PASSWORD)
    seed("--password", PASSWORD)
    for username, group in STAFF_GROUPS.items():
        assert list(user(username).groups.values_list("name", flat=True)) == [group]


@pytest.mark.django_db
def test_running_twice_does_not_undo_a_transition() -> None:
    seed("--password", PASSWORD)
    order = Order.objects.get(customer__username="alice", total=Decimal("250.00"))
    order.cancel(reason="customer_request")
    order.save()

    seed("--password", PASSWORD)

    assert Order.objects.count() == 12
    assert Order.objects.get(pk=order.pk).status == "cancelled"


@pytest.mark.django_db
def test_reset_recreates_the_original_orders_after_a_transition() -> None:
    seed("--password", PASSWORD)
    order = Order.objects.get(customer__username="alice", total=Decimal("250.00"))
    order.cancel(reason="customer_request")
    order.save()
    assert Order.objects.filter(status="cancelled").count() == 2

    seed("--password", PASSWORD, "--reset")

    assert Order.objects.count() == 12
    assert rows() == expected_rows()
    again = Order.objects.get(customer__username="alice", total=Decimal("250.00"))
    assert again.status == "pending"
    assert Order.objects.filter(status="cancelled").count() == 1


@pytest.mark.django_db
def test_reset_removes_orders_that_are_not_demo_orders() -> None:
    seed("--password", PASSWORD)
    Order.objects.create(customer=user("bob"), total=Decimal("9.99"), description="extra")

    seed("--password", PASSWORD, "--reset")

    assert Order.objects.count() == 12
    assert not Order.objects.filter(description="extra").exists()


# --- passwords -----------------------------------------------------------------------


@pytest.mark.django_db
def test_given_password_works_for_every_demo_user() -> None:
    seed("--password", PASSWORD)
    for username in USERS:
        account = user(username)
        assert account.check_password(PASSWORD), username
        assert not account.check_password(PASSWORD + "-wrong")


@pytest.mark.django_db
def test_seeding_again_with_a_new_password_applies_it() -> None:
    seed("--password", PASSWORD)
    seed("--password", "another-pass-99")
    for username in USERS:
        assert user(username).check_password("another-pass-99"), username


@pytest.mark.django_db
def test_without_password_a_random_one_is_printed_once_and_works() -> None:
    output = seed()
    tokens = {token.strip(".,:;'\"`") for token in output.split()}
    admin = user("admin")
    working = [token for token in tokens if token and admin.check_password(token)]
    assert len(working) == 1, output
    password = working[0]
    assert len(password) >= 8
    assert output.count(password) == 1
    for username in USERS:
        assert user(username).check_password(password), username


@pytest.mark.django_db
def test_seeding_again_without_a_password_keeps_every_password_and_says_so() -> None:
    seed("--password", PASSWORD)
    output = seed()
    for username in (*USERS, *PROCUREMENT_USERS):
        assert user(username).check_password(PASSWORD), username
    assert "Generated password" not in output
    (kept,) = [line for line in output.splitlines() if line.startswith("Kept their password: ")]
    assert set(kept.split(": ", 1)[1].split(" (")[0].split(", ")) == {*USERS, *PROCUREMENT_USERS}


@pytest.mark.django_db
def test_without_a_password_only_a_new_user_gets_the_generated_one() -> None:
    seed("--password", PASSWORD)
    user("auditor").delete()  # a user without orders
    output = seed()
    (line,) = [line for line in output.splitlines() if line.startswith("Generated password")]
    assert line.startswith("Generated password for the new users (auditor): ")
    assert user("auditor").check_password(line.rsplit(": ", 1)[1])
    assert user("alice").check_password(PASSWORD)


@pytest.mark.django_db
def test_a_given_password_says_it_replaced_the_existing_ones() -> None:
    seed()
    output = seed("--password", PASSWORD)
    assert "Password: the one given, now every demo user's (theirs replaced)." in output
    assert "Kept their password" not in output and "Generated password" not in output


# --- groups on a fresh database (the migration) --------------------------------------

GROUP_PERMISSIONS = {
    "customer": {"cancel_order"},
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
}
# docs/demo.md#orders: customer and support also get add_order.
MAY_ALSO_HAVE = {"customer": {"add_order"}, "support": {"add_order"}}


@pytest.mark.django_db
def test_fresh_database_has_the_five_groups() -> None:
    names = set(Group.objects.values_list("name", flat=True))
    assert set(GROUP_PERMISSIONS) <= names


@pytest.mark.django_db
@pytest.mark.parametrize("group", sorted(GROUP_PERMISSIONS))
def test_fresh_database_group_has_exactly_the_spec_permissions(group: str) -> None:
    permissions = Group.objects.get(name=group).permissions.select_related("content_type")
    # The auditor is shared with procurement, where it may view purchase requests only.
    shared = {("procurement", "view_purchaserequest")} if group == "auditor" else set()
    assert {(p.content_type.app_label, p.codename) for p in permissions} - {
        ("orders", p.codename) for p in permissions
    } == shared
    permissions = [p for p in permissions if p.content_type.app_label == "orders"]
    codenames = {p.codename for p in permissions}
    extra = codenames - GROUP_PERMISSIONS[group]
    assert GROUP_PERMISSIONS[group] <= codenames
    assert extra <= MAY_ALSO_HAVE.get(group, set()), extra


@pytest.mark.django_db
def test_seeding_does_not_change_group_permissions() -> None:
    before = {
        g.name: set(g.permissions.values_list("codename", flat=True)) for g in Group.objects.all()
    }
    seed("--password", PASSWORD)
    after = {
        g.name: set(g.permissions.values_list("codename", flat=True)) for g in Group.objects.all()
    }
    assert after == before
