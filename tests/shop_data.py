"""The shop's people and purchases (``tests.generic.shop``), as fixtures.

``shop``: ``generic.Purchase`` registered, ``tests.generic.shop_api`` as the URLconf,
and the roles and purchases below made in the test's database. ``tests/conftest.py``
makes these fixtures available to every test of ``tests/``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group, Permission
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

PASSWORD = "shop-password-for-tests"

# What each role may do (codenames of generic.Purchase's permissions).
ROLES = {
    "customer": ["cancel_purchase", "add_purchase"],
    "support": ["view_purchase", "confirm_purchase", "cancel_purchase", "add_purchase"],
    "warehouse": ["view_purchase", "ship_purchase", "deliver_purchase"],
    "supervisor": [
        "view_purchase",
        "confirm_purchase",
        "cancel_purchase",
        "cancel_high_value_purchase",
        "refund_purchase",
    ],
    "auditor": ["view_purchase"],
}
STAFF = ("support", "warehouse", "supervisor", "auditor")
CUSTOMERS = ("alice", "bob")


@dataclass(frozen=True)
class Spec:
    key: str
    customer: str
    status: str
    total: str
    payment_status: str
    tracking_number: str | None = None
    delivered_days_ago: int | None = None


# Every state, both payment outcomes, a high value one, an expired refund window.
PURCHASES = (
    Spec("p-01", "alice", "pending", "250.00", "authorized"),
    Spec("p-02", "alice", "pending", "2500.00", "authorized"),
    Spec("p-03", "alice", "pending", "80.00", "pending"),
    Spec("p-04", "alice", "pending", "75.00", "failed"),
    Spec("p-05", "alice", "confirmed", "120.00", "authorized"),
    Spec("p-06", "alice", "shipped", "60.00", "authorized", tracking_number="TRK00000001"),
    Spec("p-07", "alice", "delivered", "300.00", "authorized", delivered_days_ago=3),
    Spec("p-08", "alice", "delivered", "90.00", "authorized", delivered_days_ago=45),
    Spec("p-09", "alice", "cancelled", "40.00", "authorized"),
    Spec("p-10", "bob", "pending", "500.00", "authorized"),
    Spec("p-11", "bob", "confirmed", "1500.00", "authorized"),
    Spec("p-12", "bob", "shipped", "42.00", "authorized", tracking_number="TRK00000002"),
)


@dataclass
class Shop:
    users: dict[str, AbstractUser]
    purchases: dict[str, Any]

    def purchase(self, key: str) -> Any:
        """A fresh copy of a purchase by its key (p-01 … p-12)."""
        from tests.generic.shop import Purchase

        return Purchase.objects.get(pk=self.purchases[key].pk)

    def user(self, role: str) -> AbstractUser:
        """A fresh user object: ``has_perm`` caches permissions on the instance."""
        return get_user_model().objects.get(pk=self.users[role].pk)


def seed() -> Shop:
    """The roles, their users (one password) and the purchases, in the current database."""
    from tests.generic.shop import Purchase

    users: dict[str, AbstractUser] = {}
    model = get_user_model()
    admin = model.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    users["admin"] = admin
    for role, codenames in ROLES.items():
        group = Group.objects.create(name=f"shop-{role}")
        group.permissions.set(
            Permission.objects.filter(content_type__app_label="generic", codename__in=codenames)
        )
    for name in (*STAFF, *CUSTOMERS):
        user = model.objects.create_user(
            name, f"{name}@example.com", PASSWORD, is_staff=name in STAFF
        )
        user.groups.set([Group.objects.get(name=f"shop-{name if name in STAFF else 'customer'}")])
        users[name] = user
    now = timezone.now()
    made = Purchase.objects.bulk_create(
        Purchase(
            customer=spec.customer,
            description=f"Purchase {spec.key}",
            status=spec.status,
            total=Decimal(spec.total),
            payment_status=spec.payment_status,
            tracking_number=spec.tracking_number,
            delivered_at=None
            if spec.delivered_days_ago is None
            else now - timedelta(days=spec.delivered_days_ago),
        )
        for spec in PURCHASES
    )
    purchases = {spec.key: purchase for spec, purchase in zip(PURCHASES, made, strict=True)}
    return Shop(users=users, purchases=purchases)


@pytest.fixture
def shop_registered() -> Iterator[None]:
    """``generic.Purchase`` in the catalog and ``tests.generic.shop_api`` the URLconf."""
    from tests.generic import shop_api

    configured: dict[str, Any] = django_settings.AFFORDANCES
    models = {**configured["MODELS"], "generic.Purchase": shop_api.REGISTRATION}
    with override_settings(AFFORDANCES={**configured, "MODELS": models}):
        importlib.reload(shop_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.shop_api"):
            yield


@pytest.fixture
def shop(db: None, shop_registered: None) -> Shop:
    return seed()


@pytest.fixture
def shop_api(shop: Shop) -> Callable[[str], APIClient]:
    """``shop_api("alice")``: an API client authenticated as that user."""

    def make(username: str) -> APIClient:
        client = APIClient()
        client.force_authenticate(shop.user(username))
        return client

    return make
