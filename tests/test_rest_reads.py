"""The REST face's reads on the shop of ``tests.generic.shop`` (docs/protocol.md#authentication,
docs/protocol.md#affordances): what the registered ``QUERYSET`` lets each caller see, the
representation as list and detail, paging, filters, and the admin's read-only state."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from tests.generic.shop import Purchase
from tests.shop_data import Shop

Api = Callable[[str], APIClient]

STAFF = ("admin", "support", "warehouse", "supervisor", "auditor")
PROBLEM = "application/problem+json"
# tests.generic.shop_api.PurchaseSerializer's fields.
REPRESENTATION_KEYS = {
    "id",
    "url",
    "customer",
    "description",
    "status",
    "paymentStatus",
    "total",
    "trackingNumber",
    "deliveredAt",
    "version",
}
AFFORDANCE_KEYS = {"affordances", "unavailableAffordances"}


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


def test_alice_sees_only_her_nine_purchases(shop_api: Api, shop: Shop) -> None:
    body = shop_api("alice").get("/api/purchases/").json()
    assert body["count"] == 9
    assert {o["customer"] for o in body["results"]} == {"alice"}
    expected = {shop.purchases[f"p-{n:02d}"].pk for n in range(1, 10)}
    assert {o["id"] for o in body["results"]} == expected


def test_bob_sees_only_his_three_purchases(shop_api: Api, shop: Shop) -> None:
    body = shop_api("bob").get("/api/purchases/").json()
    assert body["count"] == 3
    assert {o["id"] for o in body["results"]} == {
        shop.purchases[key].pk for key in ("p-10", "p-11", "p-12")
    }


@pytest.mark.parametrize("role", STAFF)
def test_staff_roles_see_all_twelve_purchases(shop_api: Api, shop: Shop, role: str) -> None:
    body = shop_api(role).get("/api/purchases/").json()
    assert body["count"] == 12
    assert {o["id"] for o in body["results"]} == {o.pk for o in shop.purchases.values()}


def test_list_is_in_a_stable_purchase(shop_api: Api, shop: Shop) -> None:
    ids = [o["id"] for o in shop_api("support").get("/api/purchases/").json()["results"]]
    assert ids == sorted(ids)


@pytest.mark.parametrize("role", ["alice", *STAFF])
def test_visible_purchase_detail_is_200(shop_api: Api, shop: Shop, role: str) -> None:
    pk = shop.purchases["p-01"].pk
    response = shop_api(role).get(f"/api/purchases/{pk}/")
    assert response.status_code == 200
    assert response.json()["id"] == pk


def test_other_customers_purchase_is_404_exactly_like_a_missing_one(
    shop_api: Api, shop: Shop
) -> None:
    alice = shop_api("alice")
    hidden = alice.get(f"/api/purchases/{shop.purchases['p-10'].pk}/")
    missing = alice.get("/api/purchases/999999/")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
    assert hidden["Content-Type"] == missing["Content-Type"]
    assert is_problem(hidden, 404, "not_found")


def test_bob_cannot_see_alices_purchase(shop_api: Api, shop: Shop) -> None:
    response = shop_api("bob").get(f"/api/purchases/{shop.purchases['p-01'].pk}/")
    assert is_problem(response, 404, "not_found")


def test_unknown_purchase_id_is_404_problem(shop_api: Api, shop: Shop) -> None:
    response = shop_api("support").get("/api/purchases/999999/")
    assert is_problem(response, 404, "not_found")


def test_non_numeric_purchase_id_is_404(shop_api: Api, shop: Shop) -> None:
    response = shop_api("support").get("/api/purchases/abc/")
    assert response.status_code == 404


@pytest.mark.parametrize("path", ["/api/purchases/", "/api/purchases/{pk}/"])
def test_anonymous_is_401(shop: Shop, path: str) -> None:
    response = APIClient().get(path.format(pk=shop.purchases["p-01"].pk))
    assert is_problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_customer_filter_cannot_reveal_other_customers_purchases(shop_api: Api, shop: Shop) -> None:
    body = shop_api("alice").get("/api/purchases/?customer=bob").json()
    assert body["count"] == 0
    assert body["results"] == []


# --- the representation --------------------------------------------------------------


def test_list_items_use_the_same_representation(shop_api: Api, shop: Shop) -> None:
    client = shop_api("support")
    pk = shop.purchases["p-06"].pk
    listed = next(o for o in client.get("/api/purchases/").json()["results"] if o["id"] == pk)
    detail = client.get(f"/api/purchases/{pk}/").json()
    assert listed == detail


def test_affordances_none_gives_the_plain_representation(shop_api: Api, shop: Shop) -> None:
    pk = shop.purchases["p-01"].pk
    body = shop_api("alice").get(f"/api/purchases/{pk}/?affordances=none").json()
    assert set(body) >= REPRESENTATION_KEYS
    assert not AFFORDANCE_KEYS & set(body)


def test_detail_carries_the_version_as_etag_and_is_private(shop_api: Api, shop: Shop) -> None:
    response = shop_api("alice").get(f"/api/purchases/{shop.purchases['p-01'].pk}/")
    assert response["ETag"] == '"1"'
    cache_control = response["Cache-Control"]
    assert "private" in cache_control
    assert "no-cache" in cache_control
    vary = {v.strip().lower() for v in response["Vary"].split(",")}
    assert {"authorization", "cookie"} <= vary


# --- pagination ----------------------------------------------------------------------


def test_list_is_paginated(shop_api: Api, shop: Shop) -> None:
    body = shop_api("support").get("/api/purchases/").json()
    assert set(body) >= {"count", "next", "previous", "results"}
    assert body["next"] is None
    assert body["previous"] is None
    assert len(body["results"]) == 12


def test_page_size_param_gives_smaller_pages_with_links(shop_api: Api, shop: Shop) -> None:
    client = shop_api("support")
    first = client.get("/api/purchases/?page_size=5").json()
    assert first["count"] == 12
    assert len(first["results"]) == 5
    assert first["previous"] is None
    assert first["next"].startswith("http://testserver/api/purchases/")
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
def many_purchases(shop: Shop) -> int:
    """205 more purchases for alice: 217 in all."""
    for n in range(205):
        Purchase.objects.create(
            customer="alice", total=Decimal("10.00") + n, description=f"bulk {n}"
        )
    return 217


def test_default_page_size_is_50(shop_api: Api, many_purchases: int) -> None:
    body = shop_api("support").get("/api/purchases/").json()
    assert body["count"] == many_purchases
    assert len(body["results"]) == 50
    assert body["next"] is not None


@pytest.mark.parametrize("asked", [1, 120, 200])
def test_page_size_up_to_200_is_served(shop_api: Api, many_purchases: int, asked: int) -> None:
    body = shop_api("support").get(f"/api/purchases/?page_size={asked}").json()
    assert body["count"] == many_purchases
    assert len(body["results"]) == asked


def test_customer_pagination_counts_only_own_purchases(shop_api: Api, many_purchases: int) -> None:
    assert shop_api("bob").get("/api/purchases/?page_size=200").json()["count"] == 3
    assert shop_api("alice").get("/api/purchases/").json()["count"] == many_purchases - 3


def test_page_beyond_the_end_is_404_not_500(shop_api: Api, shop: Shop) -> None:
    response = shop_api("support").get("/api/purchases/?page=999")
    assert response.status_code == 404
    assert response["Content-Type"].startswith(PROBLEM)


@pytest.mark.parametrize("page", ["abc", "0", "-1", "1.5", "", "last"])
def test_a_page_number_the_document_refuses_is_a_validation_error(
    shop_api: Api, shop: Shop, page: str
) -> None:
    # As strict as page_size (an integer from 1); only a page past the end is not_found.
    response = shop_api("support").get(f"/api/purchases/?page={page}")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert response.json()["errors"] == {"page": ["An integer from 1."]}


@pytest.mark.parametrize("page_size", ["abc", "0", "-5", "201", "1000", "1.5", "", "\u0661\u0662"])
def test_a_page_size_the_document_refuses_is_a_validation_error(
    shop_api: Api, shop: Shop, page_size: str
) -> None:
    # The OpenAPI document says integer, 1 to 200 (as MCP's pageSize): not quietly replaced.
    response = shop_api("support").get(f"/api/purchases/?page_size={page_size}")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert response.json()["errors"] == {"page_size": ["An integer from 1 to 200."]}


# --- filters -------------------------------------------------------------------------


def test_status_filter(shop_api: Api, shop: Shop) -> None:
    body = shop_api("support").get("/api/purchases/?status=pending").json()
    assert body["count"] == 5
    assert {o["status"] for o in body["results"]} == {"pending"}
    assert {o["id"] for o in body["results"]} == {
        shop.purchases[k].pk for k in ("p-01", "p-02", "p-03", "p-04", "p-10")
    }


def test_status_filter_for_a_customer(shop_api: Api, shop: Shop) -> None:
    body = shop_api("bob").get("/api/purchases/?status=shipped").json()
    assert [o["id"] for o in body["results"]] == [shop.purchases["p-12"].pk]


def test_customer_filter_by_username(shop_api: Api, shop: Shop) -> None:
    client = shop_api("support")
    alice = client.get("/api/purchases/?customer=alice").json()
    assert alice["count"] == 9
    assert {o["customer"] for o in alice["results"]} == {"alice"}
    bob = client.get("/api/purchases/?customer=bob").json()
    assert bob["count"] == 3


def test_filters_combine(shop_api: Api, shop: Shop) -> None:
    body = shop_api("support").get("/api/purchases/?customer=bob&status=confirmed").json()
    assert [o["id"] for o in body["results"]] == [shop.purchases["p-11"].pk]


def test_unknown_customer_filter_gives_an_empty_list(shop_api: Api, shop: Shop) -> None:
    body = shop_api("support").get("/api/purchases/?customer=nobody").json()
    assert body["count"] == 0


def test_malformed_status_filter_is_400_problem(shop_api: Api, shop: Shop) -> None:
    response = shop_api("support").get("/api/purchases/?status=bogus")
    assert is_problem(response, 400, "validation_error")
    assert "status" in response.json()["errors"]


@pytest.fixture
def admin_client_shop(shop: Shop) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="admin"))
    return client


def test_admin_changelist_filters_by_status(admin_client_shop: Client, shop: Shop) -> None:
    response = admin_client_shop.get("/admin/generic/purchase/?status__exact=shipped")
    assert response.status_code == 200
    html = response.content.decode()
    for key in ("p-06", "p-12"):
        assert f"/admin/generic/purchase/{shop.purchases[key].pk}/change/" in html
    assert f"/admin/generic/purchase/{shop.purchases['p-01'].pk}/change/" not in html


def test_admin_change_page_shows_status_read_only(admin_client_shop: Client, shop: Shop) -> None:
    purchase = shop.purchases["p-01"]
    response = admin_client_shop.get(f"/admin/generic/purchase/{purchase.pk}/change/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "field-status" in html  # the status is shown…
    assert not re.search(r"<(select|input|textarea)[^>]*\bname=\"status\"", html)  # …not editable


def test_admin_save_cannot_change_the_status(admin_client_shop: Client, shop: Shop) -> None:
    purchase = shop.purchase("p-01")
    response = admin_client_shop.get(f"/admin/generic/purchase/{purchase.pk}/change/")
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
    saved = admin_client_shop.post(f"/admin/generic/purchase/{purchase.pk}/change/", data)
    assert saved.status_code == 302  # the form was accepted…
    stored = shop.purchase("p-01")
    assert stored.description == "edited in the admin"
    assert stored.status == "pending"  # …but the status was not taken from it


def test_customer_cannot_use_the_admin(shop: Shop) -> None:
    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    response = client.get("/admin/generic/purchase/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
