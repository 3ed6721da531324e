"""The MCP endpoint over raw HTTP (docs/protocol.md#mcp): transport, lifecycle, errors, tools,
resources.

Every JSON-RPC answer is validated with the ``mcp`` package's types for the revision it
was spoken in (``tests.mcp_wire.check``). ``demo_tests/golden/mcp_tools_admin.json`` is the
admin's ``tools/list``, compared by :func:`tests.reference.assert_matches_reference` (after
an intended catalog change, review the diff and copy the ``.out.json`` written beside it
over it).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client, RequestFactory, override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.mcp.profiles import HYBRID
from affordances.mcp.tool_schemas import tool_input_schema
from affordances.mcp.views import MAX_REQUEST_BYTES, McpView
from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from demo_tests.oracle import TRANSITIONS_BY_ROLE, assert_role_tools, orders_part, procurement_part
from tests.mcp_wire import LEGACY, MODERN, OLDER, Wire, check, conforms, modern_meta
from tests.reference import assert_matches_reference

GOLDEN = Path(__file__).parent / "golden" / "mcp_tools_admin.json"
GOLDEN_PROCUREMENT = Path(__file__).parent / "golden" / "mcp_tools_admin_procurement.json"
FORBIDDEN_ORIGIN = "http://evil.example"

Api = Callable[[str], APIClient]


def token_for(demo: Demo, username: str) -> str:
    return str(AccessToken.for_user(demo.users[username]))


@pytest.fixture
def wire(demo: Demo) -> Callable[..., Wire]:
    """``wire("support")`` (handshake era) or ``wire("support", version=MODERN)``."""

    def make(username: str, *, version: str | None = LEGACY) -> Wire:
        return Wire(token_for(demo, username), version=version)

    return make


def error_of(response: Any) -> dict[str, Any]:
    body = response.json()
    check("tools/list", LEGACY, body)
    return body["error"]


# --- HTTP: authentication, origin, methods, size, media types ----------------------------


@pytest.mark.django_db
def test_a_request_without_a_token_is_401_with_a_bearer_challenge(demo: Demo) -> None:
    response = Wire(None).post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer ")
    assert "error=" not in response["WWW-Authenticate"]
    assert error_of(response)["message"].startswith("Unauthorized")
    assert response.json()["id"] is None


@pytest.mark.django_db
@pytest.mark.parametrize("token", ["not-a-jwt", "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"])
def test_an_invalid_token_is_401_invalid_token(demo: Demo, token: str) -> None:
    response = Wire(token).post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer ")
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    error_of(response)


def test_a_foreign_origin_is_403(wire: Callable[..., Wire]) -> None:
    response = wire("support").post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Origin": FORBIDDEN_ORIGIN}
    )

    assert response.status_code == 403
    assert error_of(response)["message"].startswith("Forbidden")


def test_the_servers_own_origin_and_listed_origins_are_allowed(wire: Callable[..., Wire]) -> None:
    listed = "http://inspector.example:6274"
    own = wire("support").post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Origin": "http://testserver"}
    )
    with override_settings(
        AFFORDANCES={**django_settings.AFFORDANCES, "MCP_ALLOWED_ORIGINS": [listed]}
    ):
        other = wire("support").post(
            {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Origin": listed}
        )
        preflight = Client().options(
            "/mcp",
            headers={
                "Origin": listed,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type",
            },
        )

    assert own.status_code == 200
    assert other.status_code == 200
    check("ping", LEGACY, own.json())
    check("ping", LEGACY, other.json())
    assert other["Access-Control-Allow-Origin"] == listed
    assert preflight.status_code == 204
    assert preflight["Access-Control-Allow-Origin"] == listed
    assert "authorization" in preflight["Access-Control-Allow-Headers"]


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "delete", "put", "patch"])
def test_other_http_methods_are_405(demo: Demo, method: str) -> None:
    response = getattr(Client(), method)(
        "/mcp", headers={"Authorization": f"Bearer {token_for(demo, 'support')}"}
    )

    assert response.status_code == 405
    assert "POST" in response["Allow"]
    error_of(response)


@pytest.mark.parametrize("authenticated", [True, False])
def test_an_oversized_body_is_refused_with_413(
    wire: Callable[..., Wire], authenticated: bool
) -> None:
    caller = wire("support")
    if not authenticated:
        caller.token = None
    padding = "x" * MAX_REQUEST_BYTES
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": padding}}}

    response = caller.post(body)

    assert response.status_code == 413
    assert "too large" in error_of(response)["message"]
    assert AuditRecord.objects.count() == 0


def test_a_body_that_is_not_json_by_media_type_is_415(wire: Callable[..., Wire]) -> None:
    response = wire("support").post(b"id=1", content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415
    error_of(response)


def test_a_client_that_accepts_no_json_is_406(wire: Callable[..., Wire]) -> None:
    response = wire("support").post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"Accept": "text/html"}
    )

    assert response.status_code == 406
    error_of(response)


# --- JSON-RPC envelope -----------------------------------------------------------------


@pytest.mark.parametrize("body", [b"{", b"", b"\xff\xfe", b"[1,", b'{"a": NaN}', b"{" * 100_000])
def test_malformed_json_is_a_parse_error_with_400(wire: Callable[..., Wire], body: bytes) -> None:
    response = wire("support").post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32700
    assert response.json()["id"] is None


@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [],
        "ping",
        42,
        None,
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": ""},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1},
    ],
    ids=lambda body: json.dumps(body)[:40],
)
def test_batches_and_other_invalid_requests_are_32600_with_400(
    wire: Callable[..., Wire], body: Any
) -> None:
    response = wire("support").post(body)

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def test_params_that_are_not_an_object_are_invalid_params(wire: Callable[..., Wire]) -> None:
    response = wire("support").post({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]})

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602
    assert response.json()["id"] == 3


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_an_unknown_method_is_32601(wire: Callable[..., Wire], version: str) -> None:
    response = wire("support", version=version).request("prompts/list")

    assert response.status_code == (404 if version == MODERN else 200)
    assert check("prompts/list", version, response.json())["error"]["code"] == -32601


def test_each_revision_knows_only_its_own_lifecycle_methods(wire: Callable[..., Wire]) -> None:
    assert wire("support", version=MODERN).call("ping")["error"]["code"] == -32601
    assert wire("support", version=LEGACY).call("server/discover")["error"]["code"] == -32601


@pytest.mark.parametrize("request_id", ["abc", 7, 0, "7", -3, 2**53])
def test_request_ids_are_echoed_exactly(wire: Callable[..., Wire], request_id: Any) -> None:
    envelope = wire("support").call("ping", id=request_id)

    assert envelope["id"] == request_id
    assert type(envelope["id"]) is type(request_id)


@pytest.mark.parametrize(
    "method", ["notifications/initialized", "notifications/cancelled", "notifications/unknown"]
)
def test_notifications_are_202_without_a_body(wire: Callable[..., Wire], method: str) -> None:
    response = wire("support").post({"jsonrpc": "2.0", "method": method})

    assert response.status_code == 202
    assert response.content == b""
    assert "Content-Type" not in response


def test_a_stray_response_is_accepted_and_ignored(wire: Callable[..., Wire]) -> None:
    response = wire("support").post({"jsonrpc": "2.0", "id": 9, "result": {}})

    assert response.status_code == 202


# --- lifecycle: the handshake era ------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [(OLDER, OLDER), (LEGACY, LEGACY), ("2024-11-05", LEGACY), (MODERN, LEGACY), ("x", LEGACY)],
)
def test_initialize_negotiates_a_handshake_version(
    wire: Callable[..., Wire], requested: str, negotiated: str
) -> None:
    caller = wire("support", version=None)
    response = caller.post(
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

    result = check("initialize", negotiated, response.json())["result"]
    assert result["protocolVersion"] == negotiated
    assert set(result["capabilities"]) == {"tools", "resources"}
    assert result["serverInfo"]["name"] == "django-affordances"
    # Stateless: no session is issued, any worker answers the next request.
    assert "Mcp-Session-Id" not in response


def test_the_instructions_teach_the_convention(wire: Callable[..., Wire]) -> None:
    result = wire("support", version=None).result(
        "initialize", {"protocolVersion": LEGACY, "capabilities": {}}
    )

    for term in ("affordances", "expectedVersion", "validForVersion", "stale_version", "current"):
        assert term in result["instructions"]


def test_ping_answers_an_empty_result(wire: Callable[..., Wire]) -> None:
    assert wire("support", version=OLDER).result("ping") == {}


def test_a_request_without_the_version_header_is_400(wire: Callable[..., Wire]) -> None:
    response = wire("support", version=None).request("tools/list")

    assert response.status_code == 400
    assert error_of(response)["code"] == -32600


def test_an_unsupported_version_is_32022_naming_the_supported_ones(
    wire: Callable[..., Wire],
) -> None:
    response = wire("support", version="2025-03-26").request("tools/list")

    assert response.status_code == 400
    error = check("tools/list", LEGACY, response.json())["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == "2025-03-26"
    assert set(error["data"]["supported"]) == {MODERN, LEGACY, OLDER}


# --- lifecycle: 2026-07-28 -------------------------------------------------------------


def test_discover_answers_versions_capabilities_and_cache_hints(wire: Callable[..., Wire]) -> None:
    result = wire("support", version=MODERN).result("server/discover")

    assert MODERN in result["supportedVersions"]
    assert {LEGACY, OLDER} <= set(result["supportedVersions"])
    assert set(result["capabilities"]) == {"tools", "resources"}
    assert "expectedVersion" in result["instructions"]
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] == "public"


def test_modern_lists_carry_cache_hints_scoped_to_the_caller(wire: Callable[..., Wire]) -> None:
    caller = wire("support", version=MODERN)

    assert caller.result("tools/list")["cacheScope"] == "private"
    assert caller.result("resources/list")["cacheScope"] == "private"
    assert caller.result("resources/templates/list")["ttlMs"] > 0


def _modern(caller: Wire, method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    return caller.post(
        {"jsonrpc": "2.0", "id": 5, "method": method, "params": params}, headers=headers
    )


def test_a_modern_request_without_its_meta_is_32602(wire: Callable[..., Wire]) -> None:
    response = _modern(
        wire("support", version=MODERN), "tools/list", {}, {"Mcp-Method": "tools/list"}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32602


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("tools/list", {}, {}),
        ("tools/list", {}, {"Mcp-Method": "tools/call"}),
        ("tools/call", {"name": "get_order"}, {"Mcp-Method": "tools/call"}),
        ("tools/call", {"name": "get_order"}, {"Mcp-Method": "tools/call", "Mcp-Name": "x"}),
        (
            "tools/list",
            {"_meta": {**modern_meta(), "io.modelcontextprotocol/protocolVersion": LEGACY}},
            {"Mcp-Method": "tools/list"},
        ),
    ],
)
def test_modern_headers_that_disagree_with_the_body_are_32020(
    wire: Callable[..., Wire], method: str, params: dict[str, Any], headers: dict[str, str]
) -> None:
    response = _modern(
        wire("support", version=MODERN), method, {"_meta": modern_meta(), **params}, headers
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_a_base64_encoded_mcp_name_is_decoded(wire: Callable[..., Wire], demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk
    encoded = "=?base64?" + base64.b64encode(b"get_order").decode() + "?="
    response = _modern(
        wire("support", version=MODERN),
        "tools/call",
        {"_meta": modern_meta(), "name": "get_order", "arguments": {"orderId": pk}},
        {"Mcp-Method": "tools/call", "Mcp-Name": encoded},
    )

    assert response.status_code == 200
    assert check("tools/call", MODERN, response.json())["result"]["structuredContent"]["id"] == pk


# --- tools/list ------------------------------------------------------------------------


def _tools(caller: Wire) -> list[dict[str, Any]]:
    return caller.result("tools/list")["tools"]


def test_the_admins_tool_list_equals_the_golden_file(wire: Callable[..., Wire]) -> None:
    tools = _tools(wire("admin"))
    # Orders and procurement each have their own file: the second domain only appends.
    parts = {GOLDEN: orders_part(tools), GOLDEN_PROCUREMENT: procurement_part(tools)}

    assert tools == parts[GOLDEN] + parts[GOLDEN_PROCUREMENT]
    for path, part in parts.items():
        assert_matches_reference({"tools": part}, path)


@pytest.mark.parametrize("role", list(TRANSITIONS_BY_ROLE))
def test_each_role_lists_exactly_its_catalog(
    wire: Callable[..., Wire], api: Api, role: str
) -> None:
    tools = _tools(wire(role))
    catalog = {op["name"]: op for op in api(role).get("/api/operations/").json()["operations"]}

    assert_role_tools(role, [tool["name"] for tool in tools], list(catalog))
    for tool in tools:
        entry = catalog[tool["name"]]
        assert tool["_meta"] == {"affordances/operation": entry["id"]}
        assert tool["title"] == entry["title"]
        assert tool["description"] == entry["description"]
        # The entry's schema as model providers take it (docs/protocol.md#mcp).
        provided = tool_input_schema(entry["inputSchema"])  # its bounds as Decimals
        assert tool["inputSchema"] == json.loads(json.dumps(provided, default=float))
        assert tool["annotations"] == entry["annotations"]
        assert tool["outputSchema"]["type"] == "object"
        assert tool["outputSchema"]["anyOf"][0] == entry["outputSchema"]


def test_the_tool_list_is_the_same_in_every_revision_and_on_every_request(
    wire: Callable[..., Wire],
) -> None:
    first = _tools(wire("supervisor", version=OLDER))

    assert _tools(wire("supervisor", version=LEGACY)) == first
    assert _tools(wire("supervisor", version=MODERN)) == first
    assert _tools(wire("supervisor")) == first


def test_transitions_and_failed_calls_do_not_change_the_tool_list(
    wire: Callable[..., Wire], demo: Demo
) -> None:
    caller = wire("support", version=MODERN)
    before = _tools(caller)
    pk = demo.orders["demo-01"].pk

    caller.tool("confirm_order", {"orderId": pk})
    caller.tool("confirm_order", {"orderId": pk})  # refused now: already_confirmed
    caller.call("tools/call", {"name": "ship_order", "arguments": {"orderId": pk}})

    assert _tools(caller) == before


def _small_pages(body: dict[str, Any], token: str, version: str = LEGACY) -> dict[str, Any]:
    view = McpView.as_view(profile=replace(HYBRID, page_size=3))
    request = RequestFactory().post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}", "MCP-Protocol-Version": version},
    )
    return check(body["method"], version, json.loads(view(request).content))


def test_tool_list_pages_follow_opaque_cursors(demo: Demo, wire: Callable[..., Wire]) -> None:
    token = token_for(demo, "admin")
    names: list[str] = []
    cursor = None
    for request_id in range(1, 20):
        params = {"cursor": cursor} if cursor else {}
        result = _small_pages(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}, token
        )["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break

    everything = [tool["name"] for tool in _tools(wire("admin"))]
    assert names == everything
    assert request_id == -(-len(everything) // 3)  # pages of three


@pytest.mark.parametrize("cursor", ["nope", "", 12, "dG9vbHM6LTE", "cmVzb3VyY2VzOjM"])
@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_an_invalid_cursor_is_32602(wire: Callable[..., Wire], cursor: Any, version: str) -> None:
    envelope = wire("support", version=version).call("tools/list", {"cursor": cursor})

    assert envelope["error"]["code"] == -32602


# --- tools/call ------------------------------------------------------------------------


def test_get_order_returns_the_rest_representation(
    wire: Callable[..., Wire], api: Api, demo: Demo
) -> None:
    pk = demo.orders["demo-01"].pk
    result = wire("support").tool("get_order", {"orderId": pk})
    rest = api("support").get(f"/api/orders/{pk}/").json()

    assert result["isError"] is False
    assert result["structuredContent"] == rest
    # One text block, the same JSON: clients that read the blocks read the representation
    # (a resource_link beside it reached models as a second result); its URI is `url`.
    assert result["content"] == [{"type": "text", "text": result["content"][0]["text"]}]
    assert json.loads(result["content"][0]["text"]) == rest


def test_list_orders_pages_like_rest(wire: Callable[..., Wire], api: Api) -> None:
    page = wire("support").tool("list_orders", {"page": 2, "pageSize": 5})["structuredContent"]
    rest = api("support").get("/api/orders/?page=2&page_size=5").json()

    assert page["count"] == rest["count"] == 12
    assert page["results"] == rest["results"]
    assert page["next"] is not None and "page=3" in page["next"]
    assert page["previous"] is not None


def test_a_successful_transition_is_seen_by_rest_and_audited_as_mcp(
    wire: Callable[..., Wire], api: Api, demo: Demo
) -> None:
    pk = demo.orders["demo-01"].pk
    result = wire("support").tool("confirm_order", {"orderId": pk, "expectedVersion": 1})
    rest = api("support").get(f"/api/orders/{pk}/").json()

    assert result["isError"] is False
    assert result["structuredContent"]["status"] == "confirmed"
    assert result["structuredContent"] == rest
    assert rest["version"] == 2
    record = AuditRecord.objects.get(object_id=str(pk))
    assert (record.via, record.operation_name, record.version) == ("mcp", "confirm_order", 2)


def test_a_collection_operation_creates_through_the_same_path(wire: Callable[..., Wire]) -> None:
    caller = wire("support", version=MODERN)

    result = caller.tool(
        "create_order", {"description": "Two chairs", "total": 99.5, "customer": "alice"}
    )
    refused = caller.tool("create_order", {"description": "", "total": -1})

    order = result["structuredContent"]
    assert result["isError"] is False
    assert (order["status"], order["version"], order["customer"]) == ("pending", 1, "alice")
    assert [block["type"] for block in result["content"]] == ["text"]
    assert AuditRecord.objects.get(object_id=str(order["id"])).via == "mcp"
    assert refused["isError"] is True
    assert refused["structuredContent"]["code"] == "validation_error"


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_refusals_are_error_results_carrying_the_problem(
    wire: Callable[..., Wire], demo: Demo, version: str
) -> None:
    caller = wire("support", version=version)
    tools = {tool["name"]: tool for tool in _tools(caller)}
    shipped = demo.orders["demo-06"].pk

    result = caller.tool("cancel_order", {"orderId": shipped, "reason": "customer_request"})

    problem = result["structuredContent"]
    assert result["isError"] is True
    assert (problem["status"], problem["code"], problem["reason"]) == (
        409,
        "operation_not_available",
        "already_shipped",
    )
    assert problem["current"]["id"] == shipped
    assert json.loads(result["content"][0]["text"]) == problem
    assert conforms(tools["cancel_order"]["outputSchema"], problem)
    assert demo.order("demo-06").version == 1


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("get_order", {"orderId": "twelve"}, "orderId"),
        ("get_order", {}, "orderId"),
        ("get_order", {"orderId": 1, "extra": True}, "extra"),
        ("list_orders", {"pageSize": 500}, "pageSize"),
        ("cancel_order", {"reason": "customer_request"}, "orderId"),
        ("cancel_order", {"orderId": "ORDER", "reason": "nope"}, None),
    ],
)
def test_argument_errors_are_error_results_not_protocol_errors(
    wire: Callable[..., Wire], tool: str, arguments: dict[str, Any], field: str | None
) -> None:
    caller = wire("support")
    schema = {t["name"]: t for t in _tools(caller)}[tool]["outputSchema"]

    result = caller.tool(tool, arguments)

    problem = result["structuredContent"]
    assert result["isError"] is True
    assert problem["code"] in {"validation_error", "not_found"}
    if field is not None:
        assert field in problem["errors"]
    assert conforms(schema, problem)


def test_a_hidden_order_is_not_found_exactly_as_a_missing_one(
    wire: Callable[..., Wire], demo: Demo
) -> None:
    caller = wire("alice")
    bobs = demo.orders["demo-10"].pk

    hidden = caller.tool("get_order", {"orderId": bobs})
    missing = caller.tool("get_order", {"orderId": 999_999})
    huge = caller.tool("get_order", {"orderId": 10**30})

    assert hidden["isError"] is True
    assert hidden == missing == huge
    assert caller.tool("list_orders", {"page": 99})["structuredContent"]["code"] == "not_found"


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_unknown_and_forbidden_tools_are_the_same_32602(
    wire: Callable[..., Wire], version: str
) -> None:
    caller = wire("alice", version=version)

    forbidden = caller.call("tools/call", {"name": "ship_order", "arguments": {}})
    unknown = caller.call("tools/call", {"name": "launch_rockets", "arguments": {}})
    by_urn = caller.call(
        "tools/call", {"name": "urn:example:operation:get-order:v1", "arguments": {}}
    )

    assert forbidden["error"]["code"] == -32602
    assert forbidden["error"] == unknown["error"] == by_urn["error"]
    assert "ship" not in json.dumps(forbidden)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"name": 5},
        {"name": "get_order", "arguments": [1]},
        {"name": "get_order", "arguments": "x"},
        {"name": "confirm_order", "arguments": {}, "_meta": {"affordances/idempotencyKey": 7}},
    ],
)
def test_malformed_call_params_are_32602(wire: Callable[..., Wire], params: dict) -> None:
    assert wire("support").call("tools/call", params)["error"]["code"] == -32602


def test_an_idempotency_key_replays_the_first_success(
    wire: Callable[..., Wire], demo: Demo
) -> None:
    caller = wire("support", version=MODERN)
    pk = demo.orders["demo-10"].pk
    meta = {"affordances/idempotencyKey": "retry-7f1c"}

    first = caller.tool("confirm_order", {"orderId": pk}, _meta=meta)
    again = caller.tool("confirm_order", {"orderId": pk}, _meta=meta)
    other = caller.tool("confirm_order", {"orderId": pk, "expectedVersion": 1}, _meta=meta)

    assert first["isError"] is False
    assert again["structuredContent"] == first["structuredContent"]
    assert again["_meta"]["affordances/replayed"] is True
    assert "affordances/replayed" not in first["_meta"]
    assert other["structuredContent"]["code"] == "idempotency_key_reused"
    assert demo.order("demo-10").version == 2
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1


# --- resources -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_orders_are_resources_read_with_their_affordances(
    wire: Callable[..., Wire], api: Api, demo: Demo, version: str
) -> None:
    caller = wire("support", version=version)
    pk = demo.orders["demo-01"].pk
    rest = api("support").get(f"/api/orders/{pk}/").json()

    templates = caller.result("resources/templates/list")["resourceTemplates"]
    listed = caller.result("resources/list")["resources"]
    contents = caller.result("resources/read", {"uri": rest["url"]})["contents"]

    assert templates[0]["uriTemplate"] == "http://testserver/api/orders/{orderId}/"
    assert len(listed) == 12 and listed[0]["uri"] == rest["url"]
    assert contents[0]["mimeType"] == "application/json"
    assert json.loads(contents[0]["text"]) == rest
    assert rest["affordances"]


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_a_hidden_resource_is_not_found_exactly_as_a_missing_one(
    wire: Callable[..., Wire], demo: Demo, version: str
) -> None:
    caller = wire("alice", version=version)
    code = -32602 if version == MODERN else -32002
    bobs = f"http://testserver/api/orders/{demo.orders['demo-10'].pk}/"

    errors = [
        caller.call("resources/read", {"uri": uri})["error"]
        for uri in (bobs, "http://testserver/api/orders/999999/")
    ]
    others = [
        caller.call("resources/read", {"uri": uri})["error"]["code"]
        for uri in ("http://elsewhere.example/api/orders/1/", "http://[", "urn:x", "/api/")
    ]

    assert [error["code"] for error in errors] == [code, code]
    assert errors[0]["message"] == errors[1]["message"]
    assert others == [code] * 4
    assert len(caller.result("resources/list")["resources"]) == 9


def test_resource_list_pages_cover_every_visible_order(demo: Demo) -> None:
    token = token_for(demo, "support")
    uris: list[str] = []
    cursor = None
    for request_id in range(1, 20):
        params = {"cursor": cursor} if cursor else {}
        result = _small_pages(
            {"jsonrpc": "2.0", "id": request_id, "method": "resources/list", "params": params},
            token,
        )["result"]
        uris += [resource["uri"] for resource in result["resources"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break

    assert len(uris) == len(set(uris)) == 12


# --- nothing produces a 500 ------------------------------------------------------------

ODD_CALLS: list[tuple[str, Any]] = [
    ("tools/call", {"name": "get_order", "arguments": {"orderId": -1}}),
    ("tools/call", {"name": "get_order", "arguments": {"orderId": 1.5}}),
    ("tools/call", {"name": "cancel_order", "arguments": {"orderId": 2**70, "reason": "x"}}),
    ("tools/call", {"name": "cancel_order", "arguments": {"orderId": [1], "reason": None}}),
    ("tools/call", {"name": "refund_order", "arguments": {"orderId": 7, "amount": "lots"}}),
    ("tools/call", {"name": "refund_order", "arguments": {"orderId": 7, "amount": 1e308}}),
    ("tools/call", {"name": "confirm_order", "arguments": {"orderId": 1, "expectedVersion": "x"}}),
    (
        "tools/call",
        {"name": "confirm_order", "arguments": {"orderId": 1, "expectedVersion": 2**80}},
    ),
    (
        "tools/call",
        {
            "name": "confirm_order",
            "arguments": {"orderId": 1},
            "_meta": {"affordances/idempotencyKey": ""},
        },
    ),
    (
        "tools/call",
        {
            "name": "confirm_order",
            "arguments": {"orderId": 1},
            "_meta": {"affordances/idempotencyKey": "k" * 300},
        },
    ),
    ("tools/call", {"name": "list_orders", "arguments": {"page": 0}}),
    ("tools/call", {"name": "list_orders", "arguments": {"page": 2**70}}),
    ("tools/call", {"name": "\x00", "arguments": {}}),
    ("tools/call", {"name": "get_order", "_meta": "x"}),
    ("resources/read", {"uri": "http://testserver/api/orders/1/cancel/"}),
    ("resources/read", {"uri": "http://testserver/api/orders/99999999999999999999999/"}),
    ("resources/read", {"uri": 5}),
    ("resources/list", {"cursor": "=" * 64}),
    ("tools/list", {"cursor": None}),
    ("initialize", {}),
    ("initialize", {"protocolVersion": 5}),
]


@pytest.mark.parametrize(("method", "params"), ODD_CALLS, ids=[m for m, _ in ODD_CALLS])
@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_no_input_produces_a_500(
    wire: Callable[..., Wire], method: str, params: Any, version: str
) -> None:
    response = wire("admin", version=version).request(method, params)

    assert response.status_code < 500, response.content
    check(method, version if method != "initialize" else LEGACY, response.json())
