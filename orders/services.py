"""Writes of the orders domain that are not transitions: creation and the demo data.

Transitions run only through ``affordances.execution.perform``; this module never
touches ``status`` after an order exists.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction
from django.utils import timezone

from orders.models import Order, OrderStatus, PaymentStatus

DEMO_STAFF = {
    "support": "support",
    "warehouse": "warehouse",
    "supervisor": "supervisor",
    "auditor": "auditor",
}
DEMO_CUSTOMERS = ("alice", "bob")


@dataclass(frozen=True)
class DemoOrder:
    key: str
    customer: str
    status: str
    total: str
    payment_status: str
    tracking_number: str | None = None
    delivered_days_ago: int | None = None


DEMO_ORDERS: tuple[DemoOrder, ...] = (
    DemoOrder("demo-01", "alice", "pending", "250.00", "authorized"),
    DemoOrder("demo-02", "alice", "pending", "2500.00", "authorized"),
    DemoOrder("demo-03", "alice", "pending", "80.00", "pending"),
    DemoOrder("demo-04", "alice", "pending", "75.00", "failed"),
    DemoOrder("demo-05", "alice", "confirmed", "120.00", "authorized"),
    DemoOrder("demo-06", "alice", "shipped", "60.00", "authorized", tracking_number="TRK00000001"),
    DemoOrder("demo-07", "alice", "delivered", "300.00", "authorized", delivered_days_ago=3),
    DemoOrder("demo-08", "alice", "delivered", "90.00", "authorized", delivered_days_ago=45),
    DemoOrder("demo-09", "alice", "cancelled", "40.00", "authorized"),
    DemoOrder("demo-10", "bob", "pending", "500.00", "authorized"),
    DemoOrder("demo-11", "bob", "confirmed", "1500.00", "authorized"),
    DemoOrder("demo-12", "bob", "shipped", "42.00", "authorized", tracking_number="TRK00000002"),
)


@dataclass(frozen=True)
class SeedResult:
    usernames: tuple[str, ...]
    # The password given, or the one generated for the users created now.
    password: str
    password_generated: bool
    orders_created: int
    # Users that existed and, no password being given, kept theirs.
    kept: tuple[str, ...] = ()


def order_create(
    *,
    customer: AbstractUser,
    total: Decimal,
    description: str = "",
    currency: str = "EUR",
    payment_status: str = PaymentStatus.AUTHORIZED,
) -> Order:
    """A new order starts pending, at version 1."""
    return Order.objects.create(
        customer=customer,
        total=total,
        description=description,
        currency=currency,
        payment_status=payment_status,
    )


def _demo_user(
    username: str, *, password: str, keep_password: bool, group: str | None, superuser: bool
) -> tuple[AbstractUser, bool]:
    """The demo user and whether its password was kept: ``password`` is the demo's one
    password, already hashed (:func:`make_password`); an existing user keeps its own
    when ``keep_password``."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    user.email = f"{username}@example.com"
    user.is_staff = superuser or group in DEMO_STAFF.values()
    user.is_superuser = superuser
    kept = keep_password and not created
    if not kept:
        user.password = password
    user.save()
    if group is not None:
        user.groups.set([Group.objects.get(name=group)])
    return user, kept


@transaction.atomic
def seed_demo(*, password: str | None = None, reset: bool = False) -> SeedResult:
    """Create the demo users and orders of docs/demo.md#demo-data; safe to run again.

    With ``password`` every demo user gets it; without, the users created now get a
    generated one and those that exist keep theirs (a rerun never silently replaces
    the password someone was told).
    """
    generated = password is None
    if password is None:
        password = secrets.token_urlsafe(12)
    # Every demo user has the one password: hashed once (a fraction of a second per hash
    # with the production hasher), not once per user.
    hashed = make_password(password)

    roles: dict[str, tuple[str | None, bool]] = {"admin": (None, True)}
    roles |= {username: (group, False) for username, group in DEMO_STAFF.items()}
    roles |= {username: ("customer", False) for username in DEMO_CUSTOMERS}
    users: dict[str, AbstractUser] = {}
    kept: list[str] = []
    for username, (group, superuser) in roles.items():
        users[username], was_kept = _demo_user(
            username, password=hashed, keep_password=generated, group=group, superuser=superuser
        )
        if was_kept:
            kept.append(username)

    if reset:
        Order.objects.all().delete()
    created = _create_demo_orders(users)
    return SeedResult(
        usernames=tuple(users),
        password=password,
        password_generated=generated,
        orders_created=created,
        kept=tuple(kept),
    )


@transaction.atomic
def reset_demo_orders() -> int:
    """Delete every order and recreate the demo orders of the existing demo users.

    What ``seed_demo(reset=True)`` does to orders, without touching users or passwords
    (the experiment resets before every run; hashing seven passwords each time would
    dominate its runtime).
    """
    user_model = get_user_model()
    users = {u.username: u for u in user_model.objects.filter(username__in=DEMO_CUSTOMERS)}
    missing = sorted(set(DEMO_CUSTOMERS) - set(users))
    if missing:
        raise user_model.DoesNotExist(f"Run seed_demo first: no user {', '.join(missing)}.")
    Order.objects.all().delete()
    return _create_demo_orders(users, fresh=True)


def _create_demo_orders(users: dict[str, AbstractUser], *, fresh: bool = False) -> int:
    """The demo orders not there yet (``fresh``: every order was just deleted)."""
    now = timezone.now()
    created = 0
    for spec in DEMO_ORDERS:
        customer = users[spec.customer]
        if (
            not fresh
            and Order.objects.filter(customer=customer, description=_description(spec)).exists()
        ):
            continue
        # Demo orders are born in their seeded state: this is data, not a transition,
        # so it is the one place an order is created outside ``pending``.
        Order.objects.create(
            customer=customer,
            description=_description(spec),
            status=OrderStatus(spec.status),
            total=Decimal(spec.total),
            currency="EUR",
            payment_status=spec.payment_status,
            tracking_number=spec.tracking_number,
            delivered_at=(
                now - timedelta(days=spec.delivered_days_ago)
                if spec.delivered_days_ago is not None
                else None
            ),
        )
        created += 1
    return created


def _description(spec: DemoOrder) -> str:
    return f"Demo order {spec.key}"
