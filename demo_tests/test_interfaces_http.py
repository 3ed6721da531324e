"""docs/protocol.md#mcp on the two endpoints of docs/protocol.md#mcp-profiles: ``POST /mcp/static``
(A) and ``/mcp/forms`` (C).

Transport (token, Origin, methods), the JSON-RPC envelope, both lifecycles (the
``initialize`` handshake and 2026-07-28's ``server/discover``) and the stability of
``tools/list``, over raw HTTP through Django's test client. Every JSON-RPC answer is
validated with the protocol's own types for its revision (``tests.mcp_wire.check``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from demo_tests.oracle import TRANSITIONS_BY_ROLE
from tests.mcp_wire import LEGACY, MODERN, OLDER, Wire, check

STATIC, FORMS, HYBRID = "/mcp/static", "/mcp/forms", "/mcp"
NEW_ENDPOINTS = [STATIC, FORMS]
FORBIDDEN_ORIGIN = "http://evil.example"


def wire_for(demo: Demo, path: str, username: str | None, *, version: str | None = LEGACY) -> Wire:
    token = str(AccessToken.for_user(demo.users[username])) if username else None
    return Wire(token, path=path, version=version)


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    check("tools/list", LEGACY, body)
    return body["error"]


def initialize(wire: Wire, requested: str) -> Any:
    return wire.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": requested,
                "capabilities": {},
                "clientInfo": {"name": "tests", "version": "1"},
            },
        }
    )


# --- HTTP: authentication, origin, methods -------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("path", NEW_ENDPOINTS)
def test_a_request_without_a_token_is_401_with_a_bearer_challenge(demo: Demo, path: str) -> None:
    response = wire_for(demo, path, None).post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer ")
    assert error_of(response)["message"].startswith("Unauthorized")


@pytest.mark.django_db
@pytest.mark.parametrize("path", NEW_ENDPOINTS)
def test_an_invalid_token_is_401_invalid_token(demo: Demo, path: str) -> None:
    response = Wire("not-a-jwt", path=path).post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    )

    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    error_of(response)


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
def test_a_foreign_origin_is_403_and_the_servers_own_is_allowed(demo: Demo, path: str) -> None:
    wire = wire_for(demo, path, "support")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    foreign = wire.post(ping, headers={"Origin": FORBIDDEN_ORIGIN})
    own = wire.post(ping, headers={"Origin": "http://testserver"})

    assert foreign.status_code == 403
    assert error_of(foreign)["message"].startswith("Forbidden")
    assert own.status_code == 200
    assert check("ping", LEGACY, own.json())["result"] == {}


@pytest.mark.django_db
@pytest.mark.parametrize("path", NEW_ENDPOINTS)
@pytest.mark.parametrize("method", ["get", "delete"])
def test_other_http_methods_are_405(demo: Demo, path: str, method: str) -> None:
    token = AccessToken.for_user(demo.users["support"])
    response = getattr(Client(), method)(path, headers={"Authorization": f"Bearer {token}"})

    assert response.status_code == 405
    assert "POST" in response["Allow"]
    error_of(response)


# --- the JSON-RPC envelope -----------------------------------------------------------------


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
def test_notifications_initialized_is_202_without_a_body(demo: Demo, path: str) -> None:
    response = wire_for(demo, path, "support").post(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}
    )

    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
@pytest.mark.parametrize("body", [b"{", b"", b'{"jsonrpc": "2.0", "id": 1, "method": NaN}'])
def test_malformed_json_is_a_parse_error_with_400(demo: Demo, path: str, body: bytes) -> None:
    response = wire_for(demo, path, "support").post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ],
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    ],
    ids=["batch-of-one", "batch-of-two", "not-2.0"],
)
def test_batches_and_invalid_requests_are_32600_with_400(demo: Demo, path: str, body: Any) -> None:
    response = wire_for(demo, path, "support").post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_an_unknown_method_is_32601(demo: Demo, path: str, version: str) -> None:
    response = wire_for(demo, path, "support", version=version).request("prompts/list")

    assert response.status_code == (404 if version == MODERN else 200)
    assert check("prompts/list", version, response.json())["error"]["code"] == -32601


@pytest.mark.parametrize("method", ["resources/list", "resources/templates/list"])
def test_the_forms_endpoint_offers_no_resources(demo: Demo, method: str) -> None:
    envelope = wire_for(demo, FORMS, "support").call(method)

    assert envelope["error"]["code"] == -32601


# --- lifecycles ---------------------------------------------------------------------------

CAPABILITIES = {STATIC: {"tools", "resources"}, FORMS: {"tools"}}


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [(LEGACY, LEGACY), (OLDER, OLDER), (MODERN, LEGACY), ("2024-11-05", LEGACY)],
)
def test_initialize_negotiates_a_handshake_version(
    demo: Demo, path: str, requested: str, negotiated: str
) -> None:
    response = initialize(wire_for(demo, path, "support", version=None), requested)

    result = check("initialize", negotiated, response.json())["result"]
    assert result["protocolVersion"] == negotiated
    assert set(result["capabilities"]) == CAPABILITIES[path]
    assert result["serverInfo"]["name"] == "django-affordances"
    assert "Mcp-Session-Id" not in response


def test_each_endpoint_instructs_its_own_convention(demo: Demo) -> None:
    told = {
        path: initialize(wire_for(demo, path, "support", version=None), LEGACY).json()["result"][
            "instructions"
        ]
        for path in (HYBRID, STATIC, FORMS)
    }

    # A is told nothing about what applies now; B is told to act on affordances; C on
    # templates, copying the hidden expectedVersion.
    assert "affordances" not in told[STATIC] and "validForVersion" not in told[STATIC]
    assert "expectedVersion" in told[STATIC] and "operation_not_available" in told[STATIC]
    assert "validForVersion" in told[HYBRID]
    for term in ("read_resource", "submit_form", "_templates", "_links", "expectedVersion"):
        assert term in told[FORMS]
    assert "affordances" not in told[FORMS]
    assert len(set(told.values())) == 3


@pytest.mark.parametrize("path", NEW_ENDPOINTS)
def test_server_discover_answers_the_2026_revision(demo: Demo, path: str) -> None:
    wire = wire_for(demo, path, "support", version=MODERN)

    result = wire.result("server/discover")
    listed = wire.result("tools/list")

    assert result["supportedVersions"][0] == MODERN
    assert {LEGACY, OLDER} <= set(result["supportedVersions"])
    assert set(result["capabilities"]) == CAPABILITIES[path]
    assert result["instructions"]
    assert result["ttlMs"] >= 0 and result["cacheScope"] == "public"
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] == "private"
    legacy = wire_for(demo, path, "support", version=LEGACY).call("server/discover")
    assert legacy["error"]["code"] == -32601


# --- tools/list: what each endpoint offers, and its stability ------------------------------


@pytest.mark.parametrize("role", list(TRANSITIONS_BY_ROLE))
def test_the_static_tools_are_the_hybrid_catalog_without_affordances_or_current(
    demo: Demo, role: str
) -> None:
    static = wire_for(demo, STATIC, role).tools()
    hybrid = wire_for(demo, HYBRID, role).tools()

    def stable(tool: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in tool.items() if k != "outputSchema"}

    assert [stable(tool) for tool in static] == [stable(tool) for tool in hybrid]
    for tool in static:
        schema = json.dumps(tool["outputSchema"])
        assert '"affordances"' not in schema
        assert '"unavailableAffordances"' not in schema
        assert '"current"' not in schema
        assert tool["outputSchema"]["type"] == "object"
    # …while B's do describe them: the difference is the profile, not an accident.
    assert any('"current"' in json.dumps(tool["outputSchema"]) for tool in hybrid)


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_the_static_tool_list_is_unchanged_by_transitions_and_refusals(
    demo: Demo, version: str
) -> None:
    support = wire_for(demo, STATIC, "support", version=version)
    warehouse = wire_for(demo, STATIC, "warehouse", version=version)
    pk = demo.orders["demo-01"].pk
    before = (support.tools_bytes(), warehouse.tools_bytes())

    assert support.tool("confirm_order", {"orderId": pk, "expectedVersion": 1})["isError"] is False
    assert support.tool("confirm_order", {"orderId": pk})["isError"] is True  # already_confirmed
    forbidden = support.call("tools/call", {"name": "ship_order", "arguments": {"orderId": pk}})
    assert forbidden["error"]["code"] == -32602
    shipped = warehouse.tool("ship_order", {"orderId": pk, "trackingNumber": "TRK12345678"})
    assert shipped["isError"] is False

    assert (support.tools_bytes(), warehouse.tools_bytes()) == before
    assert demo.order("demo-01").version == 3


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_the_forms_tool_list_is_unchanged_by_submissions_and_refusals(
    demo: Demo, version: str
) -> None:
    support = wire_for(demo, FORMS, "support", version=version)
    pk = demo.orders["demo-10"].pk
    url = f"http://testserver/api/orders/{pk}/"
    before = support.tools_bytes()

    submitted = support.tool(
        "submit_form",
        {"url": url, "template": "confirm_order", "arguments": {"expectedVersion": "1"}},
    )
    again = support.tool(
        "submit_form",
        {"url": url, "template": "confirm_order", "arguments": {"expectedVersion": "1"}},
    )
    outside = support.tool("read_resource", {"url": "http://example.com/"})
    not_a_forms_tool = support.call("tools/call", {"name": "get_order", "arguments": {}})

    assert submitted["isError"] is False
    assert submitted["structuredContent"]["status"] == "confirmed"
    assert again["structuredContent"]["code"] == "operation_not_available"
    assert outside["structuredContent"]["code"] == "validation_error"
    assert not_a_forms_tool["error"]["code"] == -32602
    assert support.tools_bytes() == before
    assert wire_for(demo, FORMS, "auditor", version=version).tools_bytes() == before
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1
