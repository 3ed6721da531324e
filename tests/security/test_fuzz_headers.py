"""Headers and query parameters fuzzed on every face: never a 500, nothing half-applied
(on the shop of ``tests.generic.shop``).

The body fuzzers (tests/test_fuzz_mcp.py, tests/test_fuzz_openapi.py) vary what is
sent; these vary how: every header a face reads (credentials, negotiation, preconditions,
idempotency keys, MCP's per-request headers, Origin) and every query parameter a face
reads (paging, filters, the affordance profile, the schema's language and version, the
admin's filters, search and ordering) take NUL and other control characters, CR/LF,
non-ASCII digits, signs and underscores in numbers, quotes, very long values and random
text. Every answer must be below 500; a refused write changes nothing.

The budget is fixed (derandomized, no shrinking) so a run is reproducible and fits CI.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from tests.generic.shop import Purchase
from tests.shop_data import Shop

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

NASTY = (
    "\x00",
    "a\x00b",
    "\r\n",
    "a\r\nX-Injected: 1",
    "\x0b",
    "\x1f",
    "\x7f",
    "\u0085",
    "\u2028",
    "\u0662",  # Arabic-Indic 2
    "\uff12",  # full-width 2
    "\U0001d7da",  # mathematical double-struck 2
    "+2",
    " 2",
    "0_2",
    "1e400",
    "-1",
    "0",
    "9" * 40,
    "a" * 8000,
    "",
    " ",
    '"',
    '"1"',
    'W/"1"',
    "*",
    "%00",
    "../",
    "<script>alert(1)</script>",
    "\ufeff",
)
VALUES = st.one_of(st.sampled_from(NASTY), st.text(max_size=40))

REST_HEADERS = (
    "Accept",
    "Accept-Language",
    "If-Match",
    "If-None-Match",
    "Idempotency-Key",
    "Content-Type",
    "X-Forwarded-For",
    "Origin",
)
REST_PARAMS = (
    "page",
    "page_size",
    "status",
    "customer",
    "affordances",
    "format",
    "lang",
    "version",
    "ordering",
    "search",
)
MCP_HEADERS = (
    "Accept",
    "Content-Type",
    "MCP-Protocol-Version",
    "Mcp-Method",
    "Mcp-Name",
    "Mcp-Session-Id",
    "Origin",
    "Last-Event-ID",
)
ADMIN_PARAMS = ("q", "o", "p", "e", "status__exact", "status", "_changelist_filters", "all")


def _header_key(name: str) -> str:
    if name == "Content-Type":
        return "CONTENT_TYPE"
    return "HTTP_" + name.upper().replace("-", "_")


def _state() -> tuple[Any, ...]:
    return (
        tuple(Purchase.objects.order_by("pk").values_list("pk", "status", "version")),
        AuditRecord.objects.count(),
    )


def _bearer(shop: Shop, role: str) -> Client:
    return Client(
        HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(shop.users[role])}",
        raise_request_exception=False,
    )


@pytest.fixture
def rest_paths(shop: Shop) -> list[tuple[str, str]]:
    purchase = shop.purchases["p-01"].pk
    return [
        ("GET", "/api/"),
        ("GET", "/api/purchases/"),
        ("GET", f"/api/purchases/{purchase}/"),
        ("OPTIONS", f"/api/purchases/{purchase}/confirm/"),
        ("POST", f"/api/purchases/{purchase}/confirm/"),
        ("POST", f"/api/purchases/{purchase}/cancel/"),
        ("GET", "/api/operations/"),
        ("GET", "/api/operations/confirm_purchase/"),
        ("GET", "/api/schema/"),
        ("POST", "/api/token/"),
        ("POST", "/api/token/refresh/"),
    ]


@FUZZ
@given(data=st.data())
def test_rest_and_hal_headers_and_query_parameters_never_make_a_500(
    shop: Shop, rest_paths: list[tuple[str, str]], data: Any
) -> None:
    method, path = data.draw(st.sampled_from(rest_paths))
    headers = data.draw(st.dictionaries(st.sampled_from(REST_HEADERS), VALUES, max_size=4))
    params = data.draw(st.dictionaries(st.sampled_from(REST_PARAMS), VALUES, max_size=4))
    role = data.draw(st.sampled_from(["support", "alice", "admin"]))
    client = _bearer(shop, role)
    before = _state()
    extra = {_header_key(name): value for name, value in headers.items()}
    if method == "GET":
        response = client.get(path, params, **extra)
    else:
        query = "&".join(f"{key}={value}" for key, value in params.items())
        body = '{"reason": "customer_request"}' if path.endswith("cancel/") else "{}"
        extra.setdefault("CONTENT_TYPE", "application/json")
        response = client.generic(method, f"{path}?{query}", body, **extra)
    assert response.status_code < 500, (method, path, headers, params, response.content[:300])
    if response.status_code >= 400:
        assert _state() == before


@FUZZ
@given(data=st.data())
def test_mcp_headers_and_query_parameters_never_make_a_500(shop: Shop, data: Any) -> None:
    path = data.draw(st.sampled_from(["/mcp", "/mcp/static", "/mcp/compact", "/mcp/forms"]))
    headers = data.draw(st.dictionaries(st.sampled_from(MCP_HEADERS), VALUES, max_size=4))
    params = data.draw(st.dictionaries(st.sampled_from(("cursor", "version", "x")), VALUES))
    key = data.draw(VALUES)
    method = data.draw(st.sampled_from(["tools/list", "tools/call", "ping"]))
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {}}
    if method == "tools/call":
        purchase = shop.purchases["p-01"].pk
        body["params"] = {
            "name": "confirm_purchase",
            "arguments": {"purchaseId": purchase},
            "_meta": {"affordances/idempotencyKey": key},
        }
    client = _bearer(shop, "support")
    extra = {_header_key(name): value for name, value in headers.items()}
    extra.setdefault("CONTENT_TYPE", "application/json")
    extra.setdefault("HTTP_ACCEPT", "application/json, text/event-stream")
    before = _state()
    query = "&".join(f"{name}={value}" for name, value in params.items())
    import json

    response = client.generic("POST", f"{path}?{query}", json.dumps(body), **extra)
    assert response.status_code < 500, (path, headers, params, key, response.content[:300])
    if response.status_code >= 400 or b'"isError":true' in response.content:
        assert _state() == before


@FUZZ
@given(data=st.data())
def test_admin_query_parameters_never_make_a_500(shop: Shop, data: Any) -> None:
    path = data.draw(
        st.sampled_from(
            [
                "/admin/generic/purchase/",
                f"/admin/generic/purchase/{shop.purchases['p-01'].pk}/change/",
                "/admin/affordances/auditrecord/",
            ]
        )
    )
    params = data.draw(st.dictionaries(st.sampled_from(ADMIN_PARAMS), VALUES, max_size=3))
    client = Client(raise_request_exception=False)
    client.force_login(shop.users["admin"])
    response = client.get(path, params)
    assert response.status_code < 500, (path, params, response.content[:300])
