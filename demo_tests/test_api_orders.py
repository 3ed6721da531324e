"""The orders API reads (docs/protocol.md#authentication, docs/protocol.md#affordances), the token
endpoints, and the order admin (docs/howto/admin.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from demo_tests.conftest import DEMO_PASSWORD, Demo
from orders.services import order_create

Api = Callable[[str], APIClient]

STAFF = ("admin", "support", "warehouse", "supervisor", "auditor")
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


def is_problem(response: Any, status: int, code: str) -> bool:
    body = response.json()
    return (
        response.status_code == status
        and response["Content-Type"].startswith(PROBLEM)
        and body["status"] == status
        and body["code"] == code
        and {"type", "title", "detail"} <= set(body)
    )


# --- visibility per role -------------------------------------------------------------


def test_alice_sees_only_her_nine_orders(api: Api, demo: Demo) -> None:
    body = api("alice").get("/api/orders/").json()
    assert body["count"] == 9
    assert {o["customer"] for o in body["results"]} == {"alice"}
    expected = {demo.orders[f"demo-{n:02d}"].pk for n in range(1, 10)}
    assert {o["id"] for o in body["results"]} == expected


def test_bob_sees_only_his_three_orders(api: Api, demo: Demo) -> None:
    body = api("bob").get("/api/orders/").json()
    assert body["count"] == 3
    assert {o["id"] for o in body["results"]} == {
        demo.orders[key].pk for key in ("demo-10", "demo-11", "demo-12")
    }


@pytest.mark.parametrize("role", STAFF)
def test_staff_roles_see_all_twelve_orders(api: Api, demo: Demo, role: str) -> None:
    body = api(role).get("/api/orders/").json()
    assert body["count"] == 12
    assert {o["id"] for o in body["results"]} == {o.pk for o in demo.orders.values()}


def test_list_is_in_a_stable_order(api: Api, demo: Demo) -> None:
    ids = [o["id"] for o in api("support").get("/api/orders/").json()["results"]]
    assert ids == sorted(ids)


@pytest.mark.parametrize("role", ["alice", *STAFF])
def test_visible_order_detail_is_200(api: Api, demo: Demo, role: str) -> None:
    pk = demo.orders["demo-01"].pk
    response = api(role).get(f"/api/orders/{pk}/")
    assert response.status_code == 200
    assert response.json()["id"] == pk


def test_other_customers_order_is_404_exactly_like_a_missing_one(api: Api, demo: Demo) -> None:
    alice = api("alice")
    hidden = alice.get(f"/api/orders/{demo.orders['demo-10'].pk}/")
    missing = alice.get("/api/orders/999999/")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
    assert hidden["Content-Type"] == missing["Content-Type"]
    assert is_problem(hidden, 404, "not_found")


def test_bob_cannot_see_alices_order(api: Api, demo: Demo) -> None:
    response = api("bob").get(f"/api/orders/{demo.orders['demo-01'].pk}/")
    assert is_problem(response, 404, "not_found")


def test_unknown_order_id_is_404_problem(api: Api, demo: Demo) -> None:
    response = api("support").get("/api/orders/999999/")
    assert is_problem(response, 404, "not_found")


def test_non_numeric_order_id_is_404(api: Api, demo: Demo) -> None:
    response = api("support").get("/api/orders/abc/")
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["/api/orders/", "/api/orders/{pk}/"])
def test_anonymous_is_401(demo: Demo, path: str) -> None:
    response = APIClient().get(path.format(pk=demo.orders["demo-01"].pk))
    assert is_problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_customer_filter_cannot_reveal_other_customers_orders(api: Api, demo: Demo) -> None:
    body = api("alice").get("/api/orders/?customer=bob").json()
    assert body["count"] == 0
    assert body["results"] == []


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


def test_list_items_use_the_same_representation(api: Api, demo: Demo) -> None:
    client = api("support")
    pk = demo.orders["demo-06"].pk
    listed = next(o for o in client.get("/api/orders/").json()["results"] if o["id"] == pk)
    detail = client.get(f"/api/orders/{pk}/").json()
    assert listed == detail


def test_affordances_none_gives_the_plain_representation(api: Api, demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk
    body = api("alice").get(f"/api/orders/{pk}/?affordances=none").json()
    assert set(body) >= REPRESENTATION_KEYS
    assert not AFFORDANCE_KEYS & set(body)


def test_detail_carries_the_version_as_etag_and_is_private(api: Api, demo: Demo) -> None:
    response = api("alice").get(f"/api/orders/{demo.orders['demo-01'].pk}/")
    assert response["ETag"] == '"1"'
    cache_control = response["Cache-Control"]
    assert "private" in cache_control
    assert "no-cache" in cache_control
    vary = {v.strip().lower() for v in response["Vary"].split(",")}
    assert {"authorization", "cookie"} <= vary


# --- pagination ----------------------------------------------------------------------


def test_list_is_paginated(api: Api, demo: Demo) -> None:
    body = api("support").get("/api/orders/").json()
    assert set(body) >= {"count", "next", "previous", "results"}
    assert body["next"] is None
    assert body["previous"] is None
    assert len(body["results"]) == 12


def test_page_size_param_gives_smaller_pages_with_links(api: Api, demo: Demo) -> None:
    client = api("support")
    first = client.get("/api/orders/?page_size=5").json()
    assert first["count"] == 12
    assert len(first["results"]) == 5
    assert first["previous"] is None
    assert first["next"].startswith("http://testserver/api/orders/")
    assert "page=2" in first["next"]
    assert "page_size=5" in first["next"]

    second = client.get(first["next"]).json()
    assert len(second["results"]) == 5
    assert second["previous"] is not None
    third = client.get(second["next"]).json()
    assert len(third["results"]) == 2
    assert third["next"] is None
    ids = [o["id"] for page in (first, second, third) for o in page["results"]]
    assert len(set(ids)) == 12


@pytest.fixture
def many_orders(demo: Demo) -> int:
    """205 more orders for alice: 217 in all."""
    alice = get_user_model().objects.get(username="alice")
    for n in range(205):
        order_create(customer=alice, total=Decimal("10.00") + n, description=f"bulk {n}")
    return 217


def test_default_page_size_is_50(api: Api, many_orders: int) -> None:
    body = api("support").get("/api/orders/").json()
    assert body["count"] == many_orders
    assert len(body["results"]) == 50
    assert body["next"] is not None


@pytest.mark.parametrize("asked", [1, 120, 200])
def test_page_size_up_to_200_is_served(api: Api, many_orders: int, asked: int) -> None:
    body = api("support").get(f"/api/orders/?page_size={asked}").json()
    assert body["count"] == many_orders
    assert len(body["results"]) == asked


def test_customer_pagination_counts_only_own_orders(api: Api, many_orders: int) -> None:
    assert api("bob").get("/api/orders/?page_size=200").json()["count"] == 3
    assert api("alice").get("/api/orders/").json()["count"] == many_orders - 3


def test_page_beyond_the_end_is_404_not_500(api: Api, demo: Demo) -> None:
    response = api("support").get("/api/orders/?page=999")
    assert response.status_code == 404
    assert response["Content-Type"].startswith(PROBLEM)


@pytest.mark.parametrize("page", ["abc", "0", "-1", "1.5", "", "last"])
def test_a_page_number_the_document_refuses_is_a_validation_error(
    api: Api, demo: Demo, page: str
) -> None:
    # As strict as page_size (an integer from 1); only a page past the end is not_found.
    response = api("support").get(f"/api/orders/?page={page}")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert response.json()["errors"] == {"page": ["An integer from 1."]}


@pytest.mark.parametrize("page_size", ["abc", "0", "-5", "201", "1000", "1.5", "", "\u0661\u0662"])
def test_a_page_size_the_document_refuses_is_a_validation_error(
    api: Api, demo: Demo, page_size: str
) -> None:
    # The OpenAPI document says integer, 1 to 200 (as MCP's pageSize): not quietly replaced.
    response = api("support").get(f"/api/orders/?page_size={page_size}")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert response.json()["errors"] == {"page_size": ["An integer from 1 to 200."]}


# --- filters -------------------------------------------------------------------------


def test_status_filter(api: Api, demo: Demo) -> None:
    body = api("support").get("/api/orders/?status=pending").json()
    assert body["count"] == 5
    assert {o["status"] for o in body["results"]} == {"pending"}
    assert {o["id"] for o in body["results"]} == {
        demo.orders[k].pk for k in ("demo-01", "demo-02", "demo-03", "demo-04", "demo-10")
    }


def test_status_filter_for_a_customer(api: Api, demo: Demo) -> None:
    body = api("bob").get("/api/orders/?status=shipped").json()
    assert [o["id"] for o in body["results"]] == [demo.orders["demo-12"].pk]


def test_customer_filter_by_username(api: Api, demo: Demo) -> None:
    client = api("support")
    alice = client.get("/api/orders/?customer=alice").json()
    assert alice["count"] == 9
    assert {o["customer"] for o in alice["results"]} == {"alice"}
    bob = client.get("/api/orders/?customer=bob").json()
    assert bob["count"] == 3


def test_filters_combine(api: Api, demo: Demo) -> None:
    body = api("support").get("/api/orders/?customer=bob&status=confirmed").json()
    assert [o["id"] for o in body["results"]] == [demo.orders["demo-11"].pk]


def test_unknown_customer_filter_gives_an_empty_list(api: Api, demo: Demo) -> None:
    body = api("support").get("/api/orders/?customer=nobody").json()
    assert body["count"] == 0


def test_malformed_status_filter_is_400_problem(api: Api, demo: Demo) -> None:
    response = api("support").get("/api/orders/?status=bogus")
    assert is_problem(response, 400, "validation_error")
    assert "status" in response.json()["errors"]


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


def test_admin_changelist_filters_by_status(admin_client_demo: Client, demo: Demo) -> None:
    response = admin_client_demo.get("/admin/orders/order/?status__exact=shipped")
    assert response.status_code == 200
    html = response.content.decode()
    for key in ("demo-06", "demo-12"):
        assert f"/admin/orders/order/{demo.orders[key].pk}/change/" in html
    assert f"/admin/orders/order/{demo.orders['demo-01'].pk}/change/" not in html


def test_admin_change_page_shows_status_read_only(admin_client_demo: Client, demo: Demo) -> None:
    order = demo.orders["demo-01"]
    response = admin_client_demo.get(f"/admin/orders/order/{order.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "field-status" in html  # the status is shown…
    assert not re.search(r"<(select|input|textarea)[^>]*\bname=\"status\"", html)  # …not editable


def test_admin_save_cannot_change_the_status(admin_client_demo: Client, demo: Demo) -> None:
    order = demo.order("demo-01")
    response = admin_client_demo.get(f"/admin/orders/order/{order.pk}/change/")
    form = response.context["adminform"].form
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if value is None:
            continue
        if hasattr(value, "pk"):
            value = value.pk
        data[name] = value
    data["status"] = "refunded"
    data["_save"] = "Save"
    data["description"] = "edited in the admin"
    saved = admin_client_demo.post(f"/admin/orders/order/{order.pk}/change/", data)
    assert saved.status_code == 302  # the form was accepted…
    stored = demo.order("demo-01")
    assert stored.description == "edited in the admin"
    assert stored.status == "pending"  # …but the status was not taken from it


def test_customer_cannot_use_the_admin(demo: Demo) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    response = client.get("/admin/orders/order/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
