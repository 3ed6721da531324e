"""``create_order`` (docs/demo.md#orders): ``POST /api/orders/``, the admin's add page, the catalog
entry.

Customers (``alice``, ``bob``) and ``support`` hold ``orders.add_order`` (the admin too, as
superuser); ``warehouse``, ``supervisor`` and ``auditor`` do not, and for them the
collection behaves exactly like a read-only one. Every refusal is checked to create
nothing: no order, no audit record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from affordances.models import AuditRecord
from demo_tests.conftest import DEMO_PASSWORD, Demo
from orders.models import Order

Api = Callable[[str], APIClient]

PROBLEM = "application/problem+json"
COLLECTION = "/api/orders/"
ADD = "/admin/orders/order/add/"
CHANGELIST = "/admin/orders/order/"
TEA = {"description": "Tea", "total": 12.5}
CREATORS = ("admin", "support", "alice", "bob")
NON_CREATORS = ("warehouse", "supervisor", "auditor")


def is_problem(response: Any, status: int, code: str) -> bool:
    body = response.json()
    return (
        response.status_code == status
        and response["Content-Type"].startswith(PROBLEM)
        and body["status"] == status
        and body["code"] == code
        and {"type", "title", "detail"} <= set(body)
    )


def counts() -> tuple[int, int]:
    return Order.objects.count(), AuditRecord.objects.count()


@contextmanager
def creates_nothing() -> Iterator[None]:
    before = counts()
    yield
    assert counts() == before


def refused(client: APIClient, body: Any, field: str) -> None:
    """``body`` is a validation_error naming ``field``, and nothing was created."""
    with creates_nothing():
        response = client.post(COLLECTION, body, format="json")
    assert is_problem(response, 400, "validation_error"), response.content
    assert field in response.json()["errors"]


def allowed(response: Any) -> set[str]:
    return {method.strip() for method in response["Allow"].split(",")}


# --------------------------------------------------------------------------------------
# Creating
# --------------------------------------------------------------------------------------


def test_a_customer_creates_an_order_for_herself(api: Api, demo: Demo) -> None:
    client = api("alice")
    before = Order.objects.count()
    response = client.post(COLLECTION, TEA, format="json")
    assert response.status_code == 201, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert response["Location"] == body["url"] == f"http://testserver/api/orders/{body['id']}/"
    assert body["customer"] == "alice"
    assert body["description"] == "Tea"
    assert body["status"] == "pending"
    assert body["paymentStatus"] == "authorized"
    assert body["total"] == "12.50"
    assert body["currency"] == "EUR"
    assert body["version"] == 1
    assert "cancel_order" in [a["name"] for a in body["affordances"]]
    assert Order.objects.count() == before + 1

    order = Order.objects.get(pk=body["id"])
    assert order.customer.username == "alice"
    assert order.total == Decimal("12.50")
    assert (order.status, order.payment_status, order.version) == ("pending", "authorized", 1)
    # The Location answers with the same representation.
    fetched = client.get(response["Location"]).json()
    assert fetched == body


def test_a_decimal_string_total_is_accepted(api: Api, demo: Demo) -> None:
    response = api("alice").post(
        COLLECTION, {"description": "Tea", "total": "12.50"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["total"] == "12.50"
    assert Order.objects.get(pk=response.json()["id"]).total == Decimal("12.50")


def test_a_customer_may_name_herself(api: Api, demo: Demo) -> None:
    response = api("alice").post(COLLECTION, {**TEA, "customer": "alice"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["customer"] == "alice"


def test_a_customer_may_not_create_for_another_customer(api: Api, demo: Demo) -> None:
    refused(api("alice"), {**TEA, "customer": "bob"}, "customer")
    assert not Order.objects.filter(customer__username="bob", description="Tea").exists()


def test_a_description_longer_than_its_max_length_as_sent_is_refused(api: Api, demo: Demo) -> None:
    """Every schema says at most 200 characters: 201 with a leading space are refused,
    though DRF, trimming first, would take them; 200 as sent are taken, trimmed."""
    refused(api("alice"), {**TEA, "description": " " + "x" * 200}, "description")
    response = api("alice").post(COLLECTION, {**TEA, "description": " " + "x" * 199}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["description"] == "x" * 199


def test_support_must_name_the_customer(api: Api, demo: Demo) -> None:
    refused(api("support"), TEA, "customer")


def test_support_creates_an_order_for_bob(api: Api, demo: Demo) -> None:
    response = api("support").post(COLLECTION, {**TEA, "customer": "bob"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["customer"] == "bob"
    assert response["Location"] == body["url"]
    assert Order.objects.get(pk=body["id"]).customer.username == "bob"
    # Bob now sees it among his orders.
    ids = {o["id"] for o in api("bob").get(COLLECTION).json()["results"]}
    assert body["id"] in ids


@pytest.mark.parametrize("username", ["nobody", "support", "warehouse", "admin", ""])
def test_the_customer_must_exist_and_be_a_customer(api: Api, demo: Demo, username: str) -> None:
    refused(api("support"), {**TEA, "customer": username}, "customer")


def test_a_description_of_200_characters_is_accepted(api: Api, demo: Demo) -> None:
    response = api("alice").post(COLLECTION, {"description": "x" * 200, "total": 1}, format="json")
    assert response.status_code == 201, response.content


def test_a_description_longer_than_200_characters_is_refused(api: Api, demo: Demo) -> None:
    refused(api("alice"), {"description": "x" * 201, "total": 1}, "description")


@pytest.mark.parametrize("missing", ["description", "total"])
def test_description_and_total_are_required(api: Api, demo: Demo, missing: str) -> None:
    body = {key: value for key, value in TEA.items() if key != missing}
    refused(api("alice"), body, missing)


@pytest.mark.parametrize("total", [0, "0.00", -5, "-0.01", 1.234, "1.234", "lots", None, True])
def test_total_must_be_a_positive_amount_in_cents(api: Api, demo: Demo, total: Any) -> None:
    refused(api("alice"), {"description": "Tea", "total": total}, "total")


@pytest.mark.parametrize("field", ["colour", "status", "paymentStatus", "version"])
def test_an_unknown_field_is_refused(api: Api, demo: Demo, field: str) -> None:
    refused(api("alice"), {**TEA, field: "shipped"}, field)


@pytest.mark.parametrize(
    "raw", ["{bad json", "[]", '[{"description": "Tea", "total": 1}]', "null", '"Tea"', "42"]
)
def test_a_malformed_or_non_object_body_is_malformed_request(
    api: Api, demo: Demo, raw: str
) -> None:
    with creates_nothing():
        response = api("alice").post(COLLECTION, raw, content_type="application/json")
    assert is_problem(response, 400, "malformed_request"), response.content


# --------------------------------------------------------------------------------------
# Who may create
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", NON_CREATORS)
@pytest.mark.parametrize("raw", ['{"description": "Tea", "total": 12.5}', "{bad json"])
def test_roles_without_add_order_get_405_exactly_like_a_read_only_collection(
    api: Api, demo: Demo, role: str, raw: str
) -> None:
    client = api(role)
    with creates_nothing():
        orders = client.post(COLLECTION, raw, content_type="application/json")
    # /api/operations/ is a read-only collection: GET only.
    read_only = client.post("/api/operations/", raw, content_type="application/json")
    assert is_problem(orders, 405, "method_not_allowed")
    assert orders.json() == read_only.json()
    assert orders["Content-Type"] == read_only["Content-Type"]
    assert allowed(orders) == allowed(read_only) == {"GET", "HEAD", "OPTIONS"}


@pytest.mark.parametrize("role", [*CREATORS, *NON_CREATORS])
def test_the_allow_header_offers_post_only_to_roles_with_add_order(
    api: Api, demo: Demo, role: str
) -> None:
    client = api(role)
    for response in (client.get(COLLECTION), client.options(COLLECTION)):
        assert response.status_code == 200
        assert ("POST" in allowed(response)) == (role in CREATORS), response["Allow"]
        assert {"GET", "HEAD", "OPTIONS"} <= allowed(response)


@pytest.mark.parametrize("role", NON_CREATORS)
def test_options_reveals_no_create_input_to_roles_without_add_order(
    api: Api, demo: Demo, role: str
) -> None:
    body = api(role).options(COLLECTION).json()
    assert "POST" not in body.get("actions", {})


@pytest.mark.parametrize("role", ["alice", "support"])
def test_options_describes_the_create_input_to_roles_with_add_order(
    api: Api, demo: Demo, role: str
) -> None:
    # DRF's OPTIONS metadata describes what a POST takes: create_order's input.
    post = api(role).options(COLLECTION).json()["actions"]["POST"]
    for name in ("description", "total", "customer"):
        assert name in post, sorted(post)
        assert post[name]["read_only"] is False
    assert post["description"]["required"] is True
    assert post["total"]["required"] is True


def test_anonymous_post_is_401(demo: Demo) -> None:
    with creates_nothing():
        response = APIClient().post(COLLECTION, TEA, format="json")
    assert is_problem(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


# --------------------------------------------------------------------------------------
# Audit
# --------------------------------------------------------------------------------------


def test_each_creation_writes_one_audit_record(api: Api, demo: Demo) -> None:
    assert AuditRecord.objects.count() == 0
    body = api("alice").post(COLLECTION, TEA, format="json").json()
    (record,) = AuditRecord.objects.all()
    assert record.operation == "urn:example:operation:create-order:v1"
    assert record.operation_name == "create_order"
    assert record.object_id == str(body["id"])
    assert record.content_type.model_class() is Order
    assert record.source_state == ""
    assert record.target_state == "pending"
    assert record.via == "api"
    assert record.version == 1
    assert record.username == "alice"
    assert record.user == demo.users["alice"]
    assert set(record.arguments) == {"description", "total"}
    assert record.arguments["description"] == "Tea"
    assert Decimal(str(record.arguments["total"])) == Decimal("12.5")


def test_a_staff_creation_records_the_named_customer(api: Api, demo: Demo) -> None:
    api("support").post(COLLECTION, {**TEA, "customer": "bob"}, format="json")
    (record,) = AuditRecord.objects.all()
    assert record.username == "support"
    assert record.arguments["customer"] == "bob"
    assert set(record.arguments) == {"description", "total", "customer"}


# --------------------------------------------------------------------------------------
# Idempotency
# --------------------------------------------------------------------------------------


def test_the_same_key_and_body_replay_the_first_creation(api: Api, demo: Demo) -> None:
    client = api("alice")
    before = counts()
    first = client.post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    second = client.post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == second.status_code == 201
    assert "Idempotent-Replayed" not in first
    assert second["Idempotent-Replayed"] == "true"
    assert second.json() == first.json()
    assert second["Location"] == first["Location"]
    assert counts() == (before[0] + 1, before[1] + 1)


def test_the_same_key_with_another_body_is_refused(api: Api, demo: Demo) -> None:
    client = api("alice")
    assert (
        client.post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="k-2").status_code == 201
    )
    with creates_nothing():
        response = client.post(
            COLLECTION,
            {"description": "Coffee", "total": 3},
            format="json",
            HTTP_IDEMPOTENCY_KEY="k-2",
        )
    assert is_problem(response, 422, "idempotency_key_reused")


def test_a_refused_creation_does_not_use_up_its_key(api: Api, demo: Demo) -> None:
    client = api("alice")
    bad = client.post(
        COLLECTION, {"description": "Tea", "total": 0}, format="json", HTTP_IDEMPOTENCY_KEY="k-3"
    )
    assert is_problem(bad, 400, "validation_error")
    good = client.post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="k-3")
    assert good.status_code == 201, good.content
    assert "Idempotent-Replayed" not in good


def test_idempotency_keys_belong_to_one_caller(api: Api, demo: Demo) -> None:
    alice = api("alice").post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    bob = api("bob").post(COLLECTION, TEA, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert alice.status_code == bob.status_code == 201
    assert "Idempotent-Replayed" not in bob
    assert bob.json()["customer"] == "bob"
    assert bob.json()["id"] != alice.json()["id"]


# --------------------------------------------------------------------------------------
# The admin's add page
# --------------------------------------------------------------------------------------


def login(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=DEMO_PASSWORD)
    return client


def input_names(html: str) -> set[str]:
    return set(re.findall(r'<(?:input|select|textarea)[^>]*\bname="([^"]+)"', html))


def test_admin_add_page_shows_the_create_form(demo: Demo) -> None:
    response = login("support").get(ADD)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-operation="create_order"' in html
    assert {"description", "total", "customer"} <= input_names(html)
    assert "Create order" in html


def test_admin_add_creates_through_the_execution_path(demo: Demo) -> None:
    client = login("support")
    before = Order.objects.count()
    response = client.post(ADD, {"description": "Tea", "total": "3.50", "customer": "bob"})
    assert response.status_code == 302
    assert Order.objects.count() == before + 1
    order = Order.objects.latest("pk")
    assert response["Location"] == f"/admin/orders/order/{order.pk}/change/"
    assert order.customer.username == "bob"
    assert (order.status, order.payment_status, order.version) == ("pending", "authorized", 1)
    assert order.total == Decimal("3.50")
    (record,) = AuditRecord.objects.all()
    assert record.via == "admin"
    assert record.operation_name == "create_order"
    assert record.object_id == str(order.pk)
    assert (record.source_state, record.target_state) == ("", "pending")
    assert record.username == "support"
    assert record.arguments["customer"] == "bob"


def test_admin_add_without_customer_rerenders_with_an_error(demo: Demo) -> None:
    client = login("support")
    with creates_nothing():
        response = client.post(ADD, {"description": "Tea", "total": "3.50"})
    assert response.status_code in (200, 400)
    assert "customer" in response.context["form"].errors
    html = response.content.decode()
    assert 'data-operation="create_order"' in html
    assert "errorlist" in html


def test_admin_add_reports_a_missing_customer_once(demo: Demo) -> None:
    response = login("support").post(ADD, {"description": "Tea", "total": "3.50"})
    assert response.context["form"].errors["customer"] == ["This field is required."]


def test_admin_add_with_an_unknown_customer_creates_nothing(demo: Demo) -> None:
    client = login("support")
    with creates_nothing():
        response = client.post(ADD, {"description": "Tea", "total": "3.50", "customer": "nobody"})
    assert response.status_code in (200, 400)
    assert "customer" in response.context["form"].errors


@pytest.mark.parametrize("role", NON_CREATORS)
def test_staff_without_add_order_get_no_add_link_and_403(demo: Demo, role: str) -> None:
    client = login(role)
    changelist = client.get(CHANGELIST)
    assert changelist.status_code == 200
    assert ADD not in changelist.content.decode()
    assert client.get(ADD).status_code == 403
    with creates_nothing():
        assert client.post(ADD, {**TEA, "customer": "bob"}).status_code == 403


def test_support_sees_the_add_link(demo: Demo) -> None:
    assert ADD in login("support").get(CHANGELIST).content.decode()


# --------------------------------------------------------------------------------------
# The catalog entry
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ident", ["create_order", "urn:example:operation:create-order:v1"])
def test_catalog_entry_of_create_order(api: Api, demo: Demo, ident: str) -> None:
    response = api("alice").get(f"/api/operations/{ident}/")
    assert response.status_code == 200
    entry = response.json()
    assert entry["name"] == "create_order"
    assert entry["id"] == "urn:example:operation:create-order:v1"
    assert entry["kind"] == "create"
    assert entry["method"] == "POST"
    assert entry["resource"] == "order"
    assert "transition" not in entry
    schema = entry["inputSchema"]
    assert {"description", "total"} <= set(schema["required"])
    assert "customer" not in schema["required"]
    assert {"description", "total", "customer"} <= set(schema["properties"])
    assert entry["annotations"]["readOnlyHint"] is False


@pytest.mark.parametrize("role", CREATORS)
def test_create_order_is_in_the_catalog_of_roles_with_add_order(api: Api, role: str) -> None:
    names = [op["name"] for op in api(role).get("/api/operations/").json()["operations"]]
    assert "create_order" in names


@pytest.mark.parametrize("role", NON_CREATORS)
def test_create_order_is_unknown_to_roles_without_add_order(api: Api, role: str) -> None:
    client = api(role)
    assert is_problem(client.get("/api/operations/create_order/"), 404, "not_found")
    assert is_problem(
        client.get("/api/operations/urn:example:operation:create-order:v1/"), 404, "not_found"
    )
    listing = client.get("/api/operations/").content.decode()
    assert "create_order" not in listing and "create-order" not in listing


def test_the_demo_customers_and_support_hold_add_order(demo: Demo) -> None:
    # docs/demo.md#orders: the capability is granted to the customer and support groups.
    users = get_user_model().objects.filter(username__in=[*CREATORS, *NON_CREATORS])
    holders = {user.username for user in users if user.has_perm("orders.add_order")}
    assert holders == set(CREATORS)
