"""The demo's order representation (docs/demo.md#orders), its token endpoints, and its
order admin's filters (docs/howto/admin.md). What the REST face's reads guarantee on any
model (visibility, paging, filters, ETag) is tested on the library's shop, in
tests/test_rest_reads.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from demo_tests.conftest import DEMO_PASSWORD, Demo

Api = Callable[[str], APIClient]

PROBLEM = "application/problem+json"
REPRESENTATION_KEYS = {
    "id",
    "url",
    "customer",
    "status",
    "paymentStatus",
    "total",
    "currency",
    "trackingNumber",
    "createdAt",
    "updatedAt",
    "deliveredAt",
    "version",
}
AFFORDANCE_KEYS = {"affordances", "unavailableAffordances"}
# The order's free-text description is the one attribute beyond the protocol's example;
# it is the input of create_order (docs/demo.md#orders). Nothing else may appear.
TOLERATED_EXTRA_KEYS = {"description"}
CAMEL_CASE = re.compile(r"^[a-z][a-zA-Z0-9]*$")


# --- the representation --------------------------------------------------------------


def test_representation_has_the_spec_keys_in_camel_case(api: Api, demo: Demo) -> None:
    body = api("alice").get(f"/api/orders/{demo.orders['demo-01'].pk}/").json()
    keys = set(body)
    assert keys >= REPRESENTATION_KEYS | AFFORDANCE_KEYS
    assert keys - REPRESENTATION_KEYS - AFFORDANCE_KEYS <= TOLERATED_EXTRA_KEYS
    assert all(CAMEL_CASE.match(key) for key in keys), keys


def test_representation_values_of_a_pending_order(api: Api, demo: Demo) -> None:
    order = demo.orders["demo-01"]
    body = api("alice").get(f"/api/orders/{order.pk}/").json()
    assert body["id"] == order.pk
    assert body["url"] == f"http://testserver/api/orders/{order.pk}/"
    assert body["customer"] == "alice"
    assert body["status"] == "pending"
    assert body["paymentStatus"] == "authorized"
    assert body["total"] == "250.00"
    assert body["currency"] == "EUR"
    assert body["trackingNumber"] is None
    assert body["deliveredAt"] is None
    assert body["version"] == 1
    assert isinstance(body["version"], int)
    created = datetime.fromisoformat(body["createdAt"].replace("Z", "+00:00"))
    updated = datetime.fromisoformat(body["updatedAt"].replace("Z", "+00:00"))
    assert created.tzinfo is not None
    assert updated >= created


def test_representation_of_shipped_and_delivered_orders(api: Api, demo: Demo) -> None:
    client = api("support")
    shipped = client.get(f"/api/orders/{demo.orders['demo-06'].pk}/").json()
    assert shipped["status"] == "shipped"
    assert shipped["trackingNumber"] == "TRK00000001"
    assert shipped["total"] == "60.00"
    delivered = client.get(f"/api/orders/{demo.orders['demo-07'].pk}/").json()
    assert delivered["status"] == "delivered"
    delivered_at = datetime.fromisoformat(delivered["deliveredAt"].replace("Z", "+00:00"))
    assert delivered_at == demo.order("demo-07").delivered_at
    failed = client.get(f"/api/orders/{demo.orders['demo-04'].pk}/").json()
    assert failed["paymentStatus"] == "failed"
    high = client.get(f"/api/orders/{demo.orders['demo-11'].pk}/").json()
    assert high["total"] == "1500.00"
    assert high["customer"] == "bob"


# --- token authentication ------------------------------------------------------------


def obtain(username: str, password: str) -> Any:
    return APIClient().post(
        "/api/token/", {"username": username, "password": password}, format="json"
    )


def test_token_endpoint_gives_access_and_refresh(demo: Demo) -> None:
    response = obtain("alice", DEMO_PASSWORD)
    assert response.status_code == 200
    body = response.json()
    assert {"access", "refresh"} <= set(body)
    assert body["access"] != body["refresh"]


def test_token_endpoint_refuses_a_bad_password(demo: Demo) -> None:
    response = obtain("alice", DEMO_PASSWORD + "-wrong")
    assert response.status_code == 401
    assert "access" not in response.json()


def test_token_endpoint_refuses_an_unknown_user(demo: Demo) -> None:
    assert obtain("mallory", DEMO_PASSWORD).status_code == 401


def test_access_token_authenticates_as_bearer(demo: Demo) -> None:
    access = obtain("alice", DEMO_PASSWORD).json()["access"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    body = client.get("/api/orders/").json()
    assert body["count"] == 9
    assert {o["customer"] for o in body["results"]} == {"alice"}


def test_bearer_token_carries_the_callers_identity(demo: Demo) -> None:
    access = obtain("bob", DEMO_PASSWORD).json()["access"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    assert client.get("/api/orders/").json()["count"] == 3
    assert client.get(f"/api/orders/{demo.orders['demo-01'].pk}/").status_code == 404


def test_refresh_token_gives_a_new_working_access_token(demo: Demo) -> None:
    tokens = obtain("support", DEMO_PASSWORD).json()
    response = APIClient().post(
        "/api/token/refresh/", {"refresh": tokens["refresh"]}, format="json"
    )
    assert response.status_code == 200
    access = response.json()["access"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    assert client.get("/api/orders/").json()["count"] == 12


def test_refresh_refuses_an_access_token(demo: Demo) -> None:
    tokens = obtain("support", DEMO_PASSWORD).json()
    response = APIClient().post("/api/token/refresh/", {"refresh": tokens["access"]}, format="json")
    assert response.status_code == 401


@pytest.mark.parametrize("header", ["Bearer not-a-token", "Bearer ", "Token abc"])
def test_invalid_authorization_is_401(demo: Demo, header: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.get("/api/orders/").status_code == 401


def test_refresh_token_is_not_accepted_as_bearer(demo: Demo) -> None:
    refresh = obtain("alice", DEMO_PASSWORD).json()["refresh"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {refresh}")
    assert client.get("/api/orders/").status_code == 401


def test_session_login_works_for_the_api(demo: Demo) -> None:
    client = APIClient()
    client.force_login(get_user_model().objects.get(username="auditor"))
    assert client.get("/api/orders/").json()["count"] == 12


# --- the admin -----------------------------------------------------------------------


@pytest.fixture
def admin_client_demo(demo: Demo) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    return client


def test_admin_changelist_lists_orders_with_status_and_customer_filters(
    admin_client_demo: Client, demo: Demo
) -> None:
    response = admin_client_demo.get("/admin/orders/order/")
    assert response.status_code == 200
    html = response.content.decode()
    for state in ("pending", "confirmed", "shipped", "delivered", "refunded", "cancelled"):
        assert f"?status__exact={state}" in html
    alice = demo.users["alice"].pk
    bob = demo.users["bob"].pk
    assert f"?customer__id__exact={alice}" in html
    assert f"?customer__id__exact={bob}" in html
    for order in demo.orders.values():
        assert f"/admin/orders/order/{order.pk}/change/" in html
