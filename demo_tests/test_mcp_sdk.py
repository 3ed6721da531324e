"""The MCP endpoint driven by the official ``mcp`` SDK client against a live server.

Both connection modes of ``mcp.Client``: ``legacy`` (the ``initialize`` handshake,
2025-11-25) and the default ``auto`` (``server/discover``, then 2026-07-28 with its
per-request headers and ``_meta``). The SDK validates every result it parses; on top
of that, every HTTP exchange is recorded and each answer checked again with the
protocol's own types for its revision (``tests.mcp_wire.check``).

The client is async; each test runs one scenario with ``asyncio.run`` and touches the
ORM only before and after it (Django's ORM refuses to run inside an event loop).
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import CallToolResult
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from demo_tests.oracle import TRANSITIONS_BY_ROLE, assert_role_tools, orders_part, procurement_part
from tests.mcp_wire import LEGACY, MODERN, check, conforms
from tests.reference import assert_matches_reference

# transaction=True: the live server's threads must see the demo data. serialized_rollback:
# the flush after a transactional test drops the groups the migrations created.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

MODES = ["legacy", "auto"]
NEGOTIATED = {"legacy": LEGACY, "auto": MODERN}
GOLDEN = Path(__file__).parent / "golden" / "mcp_tools_admin.json"
GOLDEN_PROCUREMENT = Path(__file__).parent / "golden" / "mcp_tools_admin_procurement.json"

# What a customer must never see a trace of: the operations she lacks the capability for.
FORBIDDEN_TRACES = [
    *(f"{verb}_order" for verb in ("confirm", "ship", "deliver", "refund")),
    *(f"{verb}-order" for verb in ("confirm", "ship", "deliver", "refund")),
    *(f"/{verb}/" for verb in ("confirm", "ship", "deliver", "refund")),
]

T = TypeVar("T")


class Recorder:
    """Every HTTP exchange of a scenario, for the protocol's own validation afterwards."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[dict[str, Any], str | None, int, bytes]] = []

    async def on_response(self, response: httpx2.Response) -> None:
        await response.aread()
        request = response.request
        if request.url.path.endswith("/mcp"):
            self.exchanges.append(
                (
                    json.loads(request.content),
                    request.headers.get("mcp-protocol-version"),
                    response.status_code,
                    response.content,
                )
            )

    def check_all(self) -> list[dict[str, Any]]:
        """Validate each answer for its revision; return the envelopes, in order."""
        envelopes = []
        for sent, version, status, content in self.exchanges:
            assert status < 500, content
            if "id" not in sent:  # a notification
                assert (status, content) == (202, b"")
                continue
            envelope = json.loads(content)
            if sent["method"] == "initialize":
                version = envelope.get("result", {}).get("protocolVersion", LEGACY)
            assert version is not None
            envelopes.append(check(sent["method"], version, envelope))
        assert envelopes, "no exchange was recorded"
        return envelopes

    def text(self) -> str:
        return "\n".join(content.decode() for *_, content in self.exchanges)

    def results(self, method: str) -> list[dict[str, Any]]:
        return [
            json.loads(content)["result"]
            for sent, _, status, content in self.exchanges
            if sent.get("method") == method and status == 200
        ]


class Server:
    """The live server as the SDK (and a plain HTTP client, for REST) sees it."""

    def __init__(self, url: str, demo: Demo) -> None:
        self.url = url
        self.demo = demo
        self.recorder = Recorder()

    def token(self, username: str) -> str:
        return str(AccessToken.for_user(self.demo.users[username]))

    def pk(self, key: str) -> int:
        return self.demo.orders[key].pk

    @asynccontextmanager
    async def client(self, username: str, mode: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.token(username)}"}
        hooks = {"response": [self.recorder.on_response]}
        async with (
            httpx2.AsyncClient(headers=headers, event_hooks=hooks, timeout=30) as http,
            Client(streamable_http_client(f"{self.url}/mcp", http_client=http), mode=mode) as c,
        ):
            yield c

    async def rest(self, username: str, path: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token(username)}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            response = await http.get(f"{self.url}{path}")
        assert response.status_code == 200, response.text
        return response.json()

    def run(self, scenario: Callable[[], Awaitable[T]]) -> T:
        result = asyncio.run(scenario())
        self.recorder.check_all()
        return result


@pytest.fixture
def server(live_server: Any, demo: Demo) -> Server:
    return Server(live_server.url, demo)


def problem_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is True, result
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert text.type == "text" and json.loads(text.text) == result.structured_content
    return result.structured_content


def body_of(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error is False, result
    assert isinstance(result.structured_content, dict)
    text = result.content[0]
    assert text.type == "text" and json.loads(text.text) == result.structured_content
    return result.structured_content


# --- connecting --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_connects_and_negotiates_its_revision(server: Server, mode: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with server.client("support", mode) as client:
            seen = {
                "version": client.protocol_version,
                "capabilities": client.server_capabilities,
                "instructions": client.instructions,
                "server": client.server_info,
            }
            if mode == "legacy":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    seen["ping"] = await client.send_ping()
            return seen

    seen = server.run(scenario)

    assert seen["version"] == NEGOTIATED[mode]
    assert seen["capabilities"].tools is not None
    assert seen["capabilities"].resources is not None
    assert seen["server"] is not None and seen["server"].name == "django-affordances"
    for term in ("affordances", "expectedVersion", "stale_version"):
        assert term in seen["instructions"]
    methods = [sent["method"] for sent, *_ in server.recorder.exchanges]
    if mode == "auto":
        assert methods[0] == "server/discover"
        assert "initialize" not in methods
    else:
        assert methods[:2] == ["initialize", "notifications/initialized"]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_a_valid_token_cannot_connect(server: Server, mode: str) -> None:
    async def scenario() -> None:
        headers = {"Authorization": "Bearer not-a-token"}
        hooks = {"response": [server.recorder.on_response]}
        async with httpx2.AsyncClient(headers=headers, event_hooks=hooks, timeout=30) as http:
            transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
            async with Client(transport, mode=mode):
                pass

    with pytest.raises(BaseException) as raised:
        asyncio.run(scenario())
    error = _mcp_error(raised.value)
    assert error is not None, raised.value
    assert "Unauthorized" in error.message
    assert {status for _, _, status, _ in server.recorder.exchanges} == {401}
    server.recorder.check_all()


def _mcp_error(exc: BaseException) -> MCPError | None:
    """The MCPError inside the task-group exception groups anyio raises on connect."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _mcp_error(inner)
            if found is not None:
                return found
    return None


# --- tools/list ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_each_role_lists_exactly_its_catalog(server: Server, mode: str) -> None:
    async def scenario() -> tuple[dict[str, list[Any]], dict[str, list[str]]]:
        listed, catalogs = {}, {}
        for role in TRANSITIONS_BY_ROLE:
            async with server.client(role, mode) as client:
                listed[role] = (await client.list_tools()).tools
            operations = (await server.rest(role, "/api/operations/"))["operations"]
            catalogs[role] = [operation["name"] for operation in operations]
        return listed, catalogs

    listed, catalogs = server.run(scenario)

    for role in TRANSITIONS_BY_ROLE:
        assert_role_tools(role, [tool.name for tool in listed[role]], catalogs[role])
        for tool in listed[role]:
            slug = tool.name.replace("_", "-")
            assert tool.meta == {"affordances/operation": f"urn:example:operation:{slug}:v1"}
            assert tool.title and tool.description and tool.annotations is not None
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
    # The admin's list, byte for byte as the server sent it, is the golden file.
    # (its orders part; procurement's part has a golden file of its own).
    admin_list = server.recorder.results("tools/list")[0]
    assert_matches_reference({"tools": orders_part(admin_list["tools"])}, GOLDEN)
    assert_matches_reference({"tools": procurement_part(admin_list["tools"])}, GOLDEN_PROCUREMENT)


# --- tools/call: reads, transitions, refusals ----------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_reads_transitions_and_refusals_over_the_sdk(server: Server, mode: str) -> None:
    pending, shipped = server.pk("demo-01"), server.pk("demo-06")

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with server.client("support", mode) as client:
            seen["tools_before"] = (await client.list_tools(cache_mode="bypass")).tools
            schemas = {tool.name: tool.output_schema for tool in seen["tools_before"]}

            read = await client.call_tool("get_order", {"orderId": pending})
            seen["read"] = body_of(read)
            seen["read_blocks"] = [block.type for block in read.content]
            seen["rest_before"] = await server.rest("support", f"/api/orders/{pending}/")

            confirmed = await client.call_tool(
                "confirm_order", {"orderId": pending, "expectedVersion": 1}
            )
            seen["confirmed"] = body_of(confirmed)
            seen["rest_after"] = await server.rest("support", f"/api/orders/{pending}/")

            refused = await client.call_tool("confirm_order", {"orderId": shipped})
            seen["refused"] = problem_of(refused)
            stale = await client.call_tool(
                "cancel_order",
                {"orderId": pending, "reason": "customer_request", "expectedVersion": 1},
            )
            seen["stale"] = problem_of(stale)
            invalid = await client.call_tool(
                "cancel_order", {"orderId": pending, "reason": "boredom", "expectedVersion": 2}
            )
            seen["invalid"] = problem_of(invalid)
            seen["conform"] = [
                conforms(schemas["confirm_order"], seen["refused"]),
                conforms(schemas["cancel_order"], seen["stale"]),
                conforms(schemas["cancel_order"], seen["invalid"]),
            ]

            for name in ("launch_rockets", "ship_order"):  # unknown; not permitted
                with pytest.raises(MCPError) as raised:
                    await client.call_tool(name, {"orderId": pending})
                seen[name] = raised.value.error

            page = await client.call_tool("list_orders", {"pageSize": 5, "status": "pending"})
            seen["page"] = body_of(page)
            resource = await client.read_resource(seen["read"]["url"])
            seen["resource"] = json.loads(resource.contents[0].text)
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            seen["tools_after"] = (await client.list_tools(cache_mode="bypass")).tools
        return seen

    seen = server.run(scenario)

    # A read is the REST representation, affordance targets and all.
    assert seen["read"] == seen["rest_before"]
    assert seen["read"]["affordances"][0]["target"].startswith(server.url)
    # One block, the representation as JSON text: nothing else for a client to pass on.
    assert seen["read_blocks"] == ["text"]
    # A transition: new version, fresh affordances, and REST sees the same object.
    assert seen["confirmed"]["status"] == "confirmed"
    assert seen["confirmed"]["version"] == 2
    assert seen["rest_after"] == seen["confirmed"]
    # Refusals are results the agent can read, with the current object to start over from.
    refused = seen["refused"]
    assert (refused["code"], refused["reason"]) == ("operation_not_available", "already_shipped")
    assert refused["current"]["id"] == shipped
    stale = seen["stale"]
    assert stale["code"] == "stale_version"
    assert stale["current"]["version"] == 2
    assert seen["invalid"]["code"] == "validation_error"
    assert "reason" in seen["invalid"]["errors"]
    assert seen["conform"] == [True, True, True]
    # Unknown and not permitted look the same: -32602, same words.
    assert seen["launch_rockets"].code == seen["ship_order"].code == -32602
    assert seen["launch_rockets"].message == seen["ship_order"].message
    # Reads page and filter like REST; resources read the same representation.
    assert seen["page"]["count"] == 4  # demo-02…04 and demo-10; demo-01 is confirmed now
    assert {order["status"] for order in seen["page"]["results"]} == {"pending"}
    assert seen["resource"] == seen["rest_after"]
    assert seen["templates"][0].uri_template.endswith("/api/orders/{orderId}/")
    # tools/list is unchanged by everything above.
    assert seen["tools_after"] == seen["tools_before"]
    lists = server.recorder.results("tools/list")
    assert [result["tools"] for result in lists[1:]] == [lists[0]["tools"]] * (len(lists) - 1)

    order = server.demo.order("demo-01")
    assert (order.status, order.version) == ("confirmed", 2)
    record = AuditRecord.objects.get(object_id=str(pending))
    assert (record.via, record.operation_name) == ("mcp", "confirm_order")


@pytest.mark.parametrize("mode", MODES)
def test_an_idempotency_key_in_meta_replays_instead_of_running_twice(
    server: Server, mode: str
) -> None:
    pk = server.pk("demo-10")
    meta = {"affordances/idempotencyKey": f"sdk-{mode}"}

    async def scenario() -> list[CallToolResult]:
        async with server.client("support", mode) as client:
            return [
                await client.call_tool("confirm_order", {"orderId": pk}, meta=meta)
                for _ in range(2)
            ]

    first, again = server.run(scenario)

    assert body_of(again) == body_of(first)
    assert again.meta is not None and again.meta["affordances/replayed"] is True
    assert server.demo.order("demo-10").version == 2
    assert AuditRecord.objects.filter(object_id=str(pk), via="mcp").count() == 1


# --- the no-leak rule ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_customer_sees_no_trace_of_operations_she_may_not_use(server: Server, mode: str) -> None:
    hers, bobs = server.pk("demo-05"), server.pk("demo-11")

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        seen["catalog"] = [
            operation["name"]
            for operation in (await server.rest("alice", "/api/operations/"))["operations"]
        ]
        async with server.client("alice", mode) as client:
            seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
            seen["page"] = body_of(await client.call_tool("list_orders", {}))
            seen["hers"] = body_of(await client.call_tool("get_order", {"orderId": hers}))
            seen["bobs"] = problem_of(await client.call_tool("get_order", {"orderId": bobs}))
            seen["none"] = problem_of(await client.call_tool("get_order", {"orderId": 999_999}))
            seen["cancel_bobs"] = problem_of(
                await client.call_tool(
                    "cancel_order", {"orderId": bobs, "reason": "customer_request"}
                )
            )
            errors = []
            for name in ("ship_order", "refund_order", "no_such_tool"):
                with pytest.raises(MCPError) as raised:
                    await client.call_tool(name, {"orderId": hers})
                errors.append((raised.value.code, raised.value.message))
            seen["errors"] = errors
            resources = (await client.list_resources()).resources
            seen["resources"] = [str(resource.uri) for resource in resources]
            for resource in resources:
                await client.read_resource(str(resource.uri))
            reads = []
            for uri in (seen["hers"]["url"].replace(str(hers), str(bobs)), f"{server.url}/x/"):
                with pytest.raises(MCPError) as raised:
                    await client.read_resource(uri)
                reads.append((raised.value.code, raised.value.message))
            seen["reads"] = reads
        return seen

    seen = server.run(scenario)

    assert_role_tools("alice", seen["tools"], seen["catalog"])
    assert seen["page"]["count"] == 9
    assert {order["customer"] for order in seen["page"]["results"]} == {"alice"}
    assert seen["bobs"] == seen["none"] == seen["cancel_bobs"]
    assert seen["bobs"]["code"] == "not_found"
    assert len(set(seen["errors"])) == 1 and seen["errors"][0][0] == -32602
    assert len(seen["resources"]) == 9
    assert len(set(seen["reads"])) == 1
    # Nothing she received — lists, representations, errors, resources — names them.
    everything = server.recorder.text()
    for trace in FORBIDDEN_TRACES:
        at = everything.find(trace)
        assert at == -1, f"{trace!r} leaks in: …{everything[max(at - 120, 0) : at + 40]}…"
