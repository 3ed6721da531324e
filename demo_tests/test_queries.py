"""A list of N orders with affordances costs a constant number of queries
(docs/protocol.md#affordances), on
every face: REST JSON, HAL-FORMS and HAL, MCP ``list_orders`` and the admin change list."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances import capabilities
from affordances.names import HAL_FORMS_MEDIA_TYPE
from orders.services import order_create


def _list_queries(username: str, page_size: int, extra: str = "") -> tuple[int, list[dict]]:
    # A fresh client and a fresh user object, and the permissions kept across requests
    # forgotten: both sizes are measured cold (the warm request is
    # test_a_second_request_loads_no_permissions').
    capabilities.forget()
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username=username))
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/api/orders/?page_size={page_size}{extra}")
    assert response.status_code == 200
    return len(captured.captured_queries), response.json()["results"]


@pytest.fixture
def many_orders(demo):
    alice = demo.users["alice"]
    bob = demo.users["bob"]
    # Alternate totals around the high-value threshold and payment states so the list
    # exercises conditions, guards and constraints, not only one code path.
    for index in range(40):
        order_create(
            customer=alice,
            total=Decimal("1500.00") if index % 3 == 0 else Decimal("20.00") + index,
            payment_status=("authorized", "pending", "failed")[index % 3],
        )
    for index in range(5):
        order_create(customer=bob, total=Decimal("30.00") + index)
    return demo


@pytest.mark.parametrize("username", ["support", "alice", "supervisor", "admin"])
def test_order_list_with_affordances_costs_the_same_queries_at_10_and_40_items(
    many_orders, username
):
    small, small_results = _list_queries(username, 10)
    large, large_results = _list_queries(username, 40)

    assert len(small_results) == 10
    assert len(large_results) == 40
    # The affordances really are computed for every item.
    assert all("affordances" in item for item in large_results)
    assert any(item["affordances"] or item["unavailableAffordances"] for item in large_results)
    assert small == large, (small, large)


def test_plain_order_list_costs_the_same_queries_at_10_and_40_items(many_orders):
    small, small_results = _list_queries("support", 10, "&affordances=none")
    large, large_results = _list_queries("support", 40, "&affordances=none")

    assert len(small_results) == 10
    assert len(large_results) == 40
    assert all("affordances" not in item for item in large_results)
    assert small == large, (small, large)


def _queries(request) -> tuple[int, bytes]:
    capabilities.forget()  # cold, as _list_queries
    with CaptureQueriesContext(connection) as captured:
        response = request()
    assert response.status_code == 200, response.content[:300]
    return len(captured.captured_queries), response.content


def _permission_queries(request) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = request()
    assert response.status_code == 200, response.content[:300]
    return [q["sql"] for q in captured.captured_queries if '"auth_permission"' in q["sql"]]


@pytest.fixture
def shared_capabilities(tmp_path):
    """The demo as deployed with a shared cache (CACHE_URL=redis://…): CachedModelBackend
    keeps the permissions there (a file cache here, shared as Redis is)."""
    cache = {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(tmp_path / "capabilities"),
    }
    with override_settings(
        CACHES={**settings.CACHES, "capabilities": cache},
        AUTHENTICATION_BACKENDS=["affordances.capabilities.CachedModelBackend"],
        AFFORDANCES={**settings.AFFORDANCES, "CAPABILITIES_CACHE": "capabilities"},
    ):
        yield


@pytest.mark.parametrize("username", ["support", "alice", "warehouse"])
def test_a_second_request_loads_no_permissions(demo, shared_capabilities, username):
    """ModelBackend's two queries (the user's permissions, its groups') are made once,
    then kept across requests (affordances.capabilities): none on the next request, on
    REST, MCP tools/list and an MCP read — the demo's QUERYSET and rules included."""
    capabilities.forget()
    order = demo.order("demo-01")
    headers = _bearer(username)
    mcp = {**headers, "MCP-Protocol-Version": "2025-11-25"}

    def detail():
        return Client().get(f"/api/orders/{order.pk}/", headers=headers)

    def rpc(method: str, params: dict):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        return lambda: Client().post("/mcp", body, content_type="application/json", headers=mcp)

    assert len(_permission_queries(detail)) == 2
    assert _permission_queries(detail) == []
    assert _permission_queries(rpc("tools/list", {})) == []
    assert _permission_queries(rpc("tools/call", {"name": "list_orders", "arguments": {}})) == []


def _bearer(username: str) -> dict[str, str]:
    user = get_user_model().objects.get(username=username)
    return {"Authorization": f"Bearer {AccessToken.for_user(user)}"}


def _mcp_list(endpoint: str, username: str, size: int):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_orders", "arguments": {"pageSize": size}},
    }
    headers = {**_bearer(username), "MCP-Protocol-Version": "2025-11-25"}
    return lambda: Client().post(
        endpoint, json.dumps(body), content_type="application/json", headers=headers
    )


def _rest_list(accept: str, username: str, size: int):
    headers = {**_bearer(username), "Accept": accept}
    return lambda: Client().get(f"/api/orders/?page_size={size}", headers=headers)


@pytest.mark.parametrize(
    ("face", "marker"),
    [
        (lambda u, n: _rest_list(HAL_FORMS_MEDIA_TYPE, u, n), b'"_templates"'),
        (lambda u, n: _rest_list("application/hal+json", u, n), b'"_embedded"'),
        (lambda u, n: _mcp_list("/mcp", u, n), b'"unavailableAffordances"'),
        (lambda u, n: _mcp_list("/mcp/static", u, n), b'"structuredContent"'),
    ],
    ids=["hal-forms", "hal", "mcp-hybrid", "mcp-static"],
)
@pytest.mark.parametrize("username", ["support", "alice", "admin"])
def test_every_face_lists_10_and_40_orders_with_the_same_queries(
    many_orders, face, marker, username
):
    small, small_body = _queries(face(username, 10))
    large, large_body = _queries(face(username, 40))

    assert marker in large_body
    assert b'"isError":true' not in large_body
    assert len(large_body) > 3 * len(small_body)  # really 40 orders, not 10
    assert small == large, (small, large)


def test_the_admin_change_list_costs_the_same_queries_at_10_and_40_orders(demo):
    alice = demo.users["alice"]
    client = Client()
    client.force_login(demo.users["admin"])

    def change_list():
        return client.get("/admin/orders/order/")

    def add(count: int) -> None:
        for index in range(count):
            order_create(
                customer=alice,
                total=Decimal("1500.00") if index % 3 == 0 else Decimal("20.00") + index,
                payment_status=("authorized", "pending", "failed")[index % 3],
            )

    add(10)
    small, small_body = _queries(change_list)
    add(30)
    large, large_body = _queries(change_list)

    assert (
        large_body.count(b'class="action-select"') - small_body.count(b'class="action-select"')
        == 30
    )
    assert small == large, (small, large)


def _order_queries(client: APIClient, url: str, body: dict, **headers: str) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.post(url, body, format="json", headers=headers)
    assert response.status_code == 200, response.content
    return [q["sql"] for q in captured.captured_queries if '"orders_order"' in q["sql"]]


def test_a_transition_reads_its_row_once_under_the_lock(demo):
    client = APIClient()
    client.force_authenticate(demo.users["warehouse"])
    shipped = demo.order("demo-05")

    queries = _order_queries(
        client, f"/api/orders/{shipped.pk}/ship/", {"trackingNumber": "TRK00000001"}
    )

    # The locked read (FOR UPDATE where the database has it) and the update; the fresh
    # representation is made from the object in memory.
    assert len(queries) == 2, queries
    assert queries[0].startswith("SELECT") and queries[1].startswith("UPDATE")


def test_with_an_idempotency_key_visibility_is_checked_before_the_claim(demo):
    client = APIClient()
    client.force_authenticate(demo.users["warehouse"])
    shipped = demo.order("demo-05")

    queries = _order_queries(
        client,
        f"/api/orders/{shipped.pk}/ship/",
        {"trackingNumber": "TRK00000001"},
        **{"Idempotency-Key": "k-1"},
    )

    assert len(queries) == 3, queries
    assert [q.split()[0] for q in queries] == ["SELECT", "SELECT", "UPDATE"]
