"""Tegg's six scenarios on the three MCP interfaces of docs/protocol.md#mcp-profiles, driven by the
``mcp`` SDK.

Interface A (``POST /mcp/static``) offers the catalog's tools and plain representations;
B (``POST /mcp``) the same tools, with each object's ``affordances``; C
(``POST /mcp/forms``) two generic tools over HAL-FORMS. Each scenario is played by small
scripted agents — one per interface and role — that use only what their interface tells
them:

- A knows the tool names and input schemas of its catalog and learns from refusals;
- B reads the object and calls only one of its ``affordances`` (``name``, ``arguments``,
  ``constraints``, ``validForVersion`` as ``expectedVersion``);
- C starts at the entry point named in ``read_resource``'s description, follows
  ``_links`` and runs only templates of the last document it read, copying hidden
  properties.

Creation, confirmation and cancellation are done by ``support``; shipping and delivery by
``warehouse`` (another token, so another client session). Cancelling asks the person
first (docs/protocol.md#confirmations): on A and B in 2026-07-28 the SDK shows the form
through its ``elicitation_callback``, where a stand-in for the person reads it and
accepts; over the legacy handshake the client cannot be asked, and the cancel is refused
with ``confirmation_required`` and nothing run. Every HTTP exchange is
recorded and each answer validated with the protocol's own types for its revision
(``tests.mcp_wire.check``); every tool result is checked against its tool's
``outputSchema``. The client is async: each test touches the ORM only before and after
``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

import httpx2
import pytest
from django.test import override_settings
from django.urls import clear_url_caches
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ElicitResult, Tool, methods
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import reset_catalog
from affordances.models import AuditRecord
from demo_tests.conftest import ROLES, Demo
from orders.models import Order, OrderStatus
from tests.mcp_wire import LEGACY, MODERN, check, conforms

# transaction=True: the live server's threads must see the demo data. serialized_rollback:
# the flush after a transactional test drops the groups the migrations created.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ENDPOINTS = {"A": "/mcp/static", "B": "/mcp", "C": "/mcp/forms"}
INTERFACES = list(ENDPOINTS)
NEGOTIATED = {"legacy": LEGACY, "auto": MODERN}
TRACKING = "TRK12345678"
AFFORDANCE_LISTS = {"affordances", "unavailableAffordances"}

T = TypeVar("T")


# --- the wire ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    path: str
    sent: dict[str, Any]
    version: str | None
    status: int
    content: bytes


class Recorder:
    """Every exchange with the three MCP endpoints, validated afterwards per revision."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []

    async def on_response(self, response: httpx2.Response) -> None:
        await response.aread()
        request = response.request
        if request.url.path in ENDPOINTS.values():
            self.exchanges.append(
                Exchange(
                    path=request.url.path,
                    sent=json.loads(request.content),
                    version=request.headers.get("mcp-protocol-version"),
                    status=response.status_code,
                    content=response.content,
                )
            )

    def check_all(self) -> None:
        assert self.exchanges, "no exchange was recorded"
        for exchange in self.exchanges:
            assert exchange.status < 500, exchange.content
            if "id" not in exchange.sent:  # a notification
                assert (exchange.status, exchange.content) == (202, b"")
                continue
            envelope = json.loads(exchange.content)
            version = exchange.version
            if exchange.sent["method"] == "initialize":
                version = envelope.get("result", {}).get("protocolVersion", LEGACY)
            assert version is not None, exchange
            result = envelope.get("result", {})
            if result.get("resultType") == "input_required":
                # The form that asks the person: a result type of 2026-07-28 only.
                assert version == MODERN, exchange
                methods.parse_server_result(exchange.sent["method"], version, result)
            else:
                check(exchange.sent["method"], version, envelope)

    def raw_results(self, path: str, method: str, *, version: str) -> list[bytes]:
        """The bytes of each successful result, envelope and request id stripped."""
        return [
            exchange.content.split(b'"result":', 1)[1]
            for exchange in self.exchanges
            if exchange.path == path
            and exchange.sent.get("method") == method
            and exchange.version == version
            and exchange.status == 200
        ]


@dataclass(frozen=True)
class Asked:
    """One form the client showed its person: who was asked, what they read."""

    username: str
    message: str
    schema: dict[str, Any]


class Server:
    """The live server as the SDK sees it, with one bearer token per demo user."""

    def __init__(self, url: str, demo: Demo) -> None:
        self.url = url
        self.demo = demo
        self.recorder = Recorder()
        self.tokens = {name: str(AccessToken.for_user(user)) for name, user in demo.users.items()}
        self.asked: list[Asked] = []

    def pk(self, key: str) -> int:
        return self.demo.orders[key].pk

    def person(self, username: str) -> Callable[[Any, Any], Awaitable[ElicitResult]]:
        """The stand-in for the person behind ``username``'s client: every form shown is
        recorded, and a form that only asks to confirm is accepted."""

        async def elicitation_callback(context: Any, params: Any) -> ElicitResult:
            self.asked.append(Asked(username, params.message, params.requested_schema))
            if set(params.requested_schema["properties"]) != {"confirm"}:
                return ElicitResult(action="decline")  # not what a scenario should ask
            return ElicitResult(action="accept", content={"confirm": True})

        return elicitation_callback

    @asynccontextmanager
    async def client(self, username: str, interface: str, mode: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.tokens[username]}"}
        hooks = {"response": [self.recorder.on_response]}
        url = f"{self.url}{ENDPOINTS[interface]}"
        async with (
            httpx2.AsyncClient(headers=headers, event_hooks=hooks, timeout=30) as http,
            Client(
                streamable_http_client(url, http_client=http),
                mode=mode,
                elicitation_callback=self.person(username),
            ) as client,
        ):
            assert client.protocol_version == NEGOTIATED[mode]
            yield client

    @asynccontextmanager
    async def team(self, interface: str, mode: str = "auto") -> AsyncIterator[Team]:
        """The scenario's cast on one interface: support and warehouse, each its session."""
        kind = AGENTS[interface]
        async with (
            self.client("support", interface, mode) as support,
            self.client("warehouse", interface, mode) as warehouse,
        ):
            team = Team(support=kind(support), warehouse=kind(warehouse))
            await team.support.start()
            await team.warehouse.start()
            yield team

    async def rest_post(self, username: str, path: str) -> int:
        headers = {"Authorization": f"Bearer {self.tokens[username]}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            response = await http.post(f"{self.url}{path}", json={})
        return response.status_code

    def run(self, play: Callable[[], Awaitable[T]]) -> T:
        result = asyncio.run(play())
        self.recorder.check_all()
        return result


@pytest.fixture
def server(live_server: Any, demo: Demo) -> Server:
    return Server(live_server.url, demo)


# --- the agents ----------------------------------------------------------------------------


@dataclass
class Outcome:
    """One decision: what the agent read, whether it called, and the answer it got."""

    read: dict[str, Any]
    called: bool
    answer: dict[str, Any] | None = None
    is_error: bool = False


class Agent:
    """A client session that calls only the tools it was listed, with valid arguments."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.tools: dict[str, Tool] = {}

    async def start(self) -> None:
        cursor: str | None = None
        while True:
            page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            self.tools.update({tool.name: tool for tool in page.tools})
            cursor = page.next_cursor
            if cursor is None:
                return

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Call a listed tool; the answer (success or problem) must match its outputSchema."""
        tool = self.tools[name]  # a KeyError here: the agent used a tool it was not given
        errors = [e.message for e in Draft202012Validator(tool.input_schema).iter_errors(arguments)]
        assert not errors, (name, arguments, errors)
        result = await self.client.call_tool(name, arguments)
        assert isinstance(result, CallToolResult)
        body = result.structured_content
        assert isinstance(body, dict), result
        text = result.content[0]
        assert text.type == "text" and json.loads(text.text) == body
        assert tool.output_schema is not None
        assert conforms(tool.output_schema, body), (name, body)
        return body, bool(result.is_error)

    async def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body, is_error = await self.call(name, arguments)
        assert not is_error, (name, arguments, body)
        return body


class StaticAgent(Agent):
    """Interface A: tools by name from the catalog, arguments from their input schemas."""

    async def create(self, **inputs: Any) -> int:
        return (await self.ok("create_order", inputs))["id"]

    async def read(self, order_id: int) -> dict[str, Any]:
        return await self.ok("get_order", {"orderId": order_id})

    async def act(self, order_id: int, operation: str, inputs: dict[str, Any]) -> Outcome:
        # Nothing says what applies now: read for the version, try, learn from the answer.
        order = await self.read(order_id)
        arguments = {"orderId": order_id, **inputs, "expectedVersion": order["version"]}
        answer, is_error = await self.call(operation, arguments)
        return Outcome(read=order, called=True, answer=answer, is_error=is_error)

    async def statuses(self) -> dict[int, str]:
        """S4: every order this caller sees, page after page, by id."""
        seen: dict[int, str] = {}
        page = 1
        while True:
            body = await self.ok("list_orders", {"page": page})
            seen.update({order["id"]: order["status"] for order in body["results"]})
            if body["next"] is None:
                return seen
            page += 1

    async def report(self, order_ids: list[int]) -> dict[int, str]:
        return {order_id: (await self.read(order_id))["status"] for order_id in order_ids}


class HybridAgent(StaticAgent):
    """Interface B: reads the object and acts only on one of its affordances."""

    async def act(self, order_id: int, operation: str, inputs: dict[str, Any]) -> Outcome:
        order = await self.read(order_id)
        affordance = next((a for a in order["affordances"] if a["name"] == operation), None)
        if affordance is None:
            return Outcome(read=order, called=False)
        arguments = {
            **affordance["arguments"],
            **inputs,
            "expectedVersion": affordance["validForVersion"],
        }
        # The affordance's constraints only narrow the tool's inputSchema
        # (docs/protocol.md#affordances).
        schema = {"allOf": [self.tools[affordance["name"]].input_schema, affordance["constraints"]]}
        assert Draft202012Validator(schema).is_valid(arguments), (affordance, arguments)
        answer, is_error = await self.call(affordance["name"], arguments)
        return Outcome(read=order, called=True, answer=answer, is_error=is_error)


def fill(template: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """A HAL-FORMS template's arguments: hidden values copied, offered values checked."""
    arguments: dict[str, Any] = {}
    names = {prop["name"] for prop in template["properties"]}
    assert set(inputs) <= names, (template, inputs)
    for prop in template["properties"]:
        name = prop["name"]
        if prop.get("type") == "hidden":
            arguments[name] = prop["value"]
        elif name in inputs:
            value = inputs[name]
            options = prop.get("options", {}).get("inline")
            if options is not None:
                offered = [o["value"] if isinstance(o, dict) else o for o in options]
                assert value in offered, (prop, value)
            if "regex" in prop:
                assert re.fullmatch(prop["regex"], str(value)), (prop, value)
            arguments[name] = value
        else:
            assert not prop.get("required"), f"the template requires {name!r}"
    return arguments


class FormsAgent(Agent):
    """Interface C: follows links from the entry point; acts only through offered templates."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.locations: dict[int, str] = {}

    @property
    def entry_point(self) -> str:
        description = self.tools["read_resource"].description or ""
        found = re.search(r"https?://\S+", description)
        assert found is not None, description
        return found.group(0).rstrip(".")

    async def read(self, url: str) -> dict[str, Any]:
        return await self.ok("read_resource", {"url": url})

    async def collection(self) -> tuple[str, dict[str, Any]]:
        entry = await self.read(self.entry_point)
        url = entry["_links"]["orders"]["href"]
        return url, await self.read(url)

    async def pages(self) -> AsyncIterator[dict[str, Any]]:
        """Every embedded order of the collection, following `next` links."""
        _, collection = await self.collection()
        while True:
            for item in collection["_embedded"]["orders"]:
                self.locations[item["id"]] = item["_links"]["self"]["href"]
                yield item
            following = collection["_links"].get("next")
            if following is None:
                return
            collection = await self.read(following["href"])

    async def locate(self, order_id: int) -> str:
        if order_id not in self.locations:
            async for item in self.pages():
                if item["id"] == order_id:
                    break
        return self.locations[order_id]

    async def submit(
        self, url: str, document: dict[str, Any], template: str, inputs: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        arguments = fill(document["_templates"][template], inputs)
        return await self.call(
            "submit_form", {"url": url, "template": template, "arguments": arguments}
        )

    async def create(self, **inputs: Any) -> int:
        url, collection = await self.collection()
        created, is_error = await self.submit(url, collection, "create_order", inputs)
        assert not is_error, created
        self.locations[created["id"]] = created["_links"]["self"]["href"]
        return created["id"]

    async def act(self, order_id: int, operation: str, inputs: dict[str, Any]) -> Outcome:
        url = await self.locate(order_id)
        document = await self.read(url)
        if operation not in document["_templates"]:
            return Outcome(read=document, called=False)
        answer, is_error = await self.submit(url, document, operation, inputs)
        return Outcome(read=document, called=True, answer=answer, is_error=is_error)

    async def probe(
        self, order_id: int, template: str, arguments: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """Not what the agent would do: submit a template without looking for it."""
        url = await self.locate(order_id)
        return await self.call(
            "submit_form", {"url": url, "template": template, "arguments": arguments}
        )

    async def statuses(self) -> dict[int, str]:
        return {item["id"]: item["status"] async for item in self.pages()}

    async def report(self, order_ids: list[int]) -> dict[int, str]:
        return {
            order_id: (await self.read(await self.locate(order_id)))["status"]
            for order_id in order_ids
        }


AGENTS: dict[str, type[StaticAgent] | type[FormsAgent]] = {
    "A": StaticAgent,
    "B": HybridAgent,
    "C": FormsAgent,
}


@dataclass
class Team:
    support: Any
    warehouse: Any


# --- the scenarios -------------------------------------------------------------------------


def assert_face(interface: str, body: dict[str, Any]) -> None:
    """A success answer has the shape of its interface (docs/protocol.md#mcp-profiles)."""
    if interface == "A":
        assert not (AFFORDANCE_LISTS | {"_templates", "_links"}) & set(body), body
    elif interface == "B":
        assert set(body) >= AFFORDANCE_LISTS, body
    else:
        assert {"_links", "_templates"} <= set(body), body
        assert not AFFORDANCE_LISTS & set(body), body


def audit_trail(order_id: int) -> list[tuple[str, str, str]]:
    records = AuditRecord.objects.filter(object_id=str(order_id)).order_by("created_at", "id")
    return [(record.operation_name, record.username, record.via) for record in records]


async def play_s1(team: Team) -> dict[str, Any]:
    order = await team.support.create(description="S1 desk", total=120.5, customer="alice")
    return {
        "order": order,
        "steps": [
            await team.support.act(order, "confirm_order", {}),
            await team.warehouse.act(order, "ship_order", {"trackingNumber": TRACKING}),
            await team.warehouse.act(order, "deliver_order", {}),
        ],
    }


def check_s1(interface: str, seen: dict[str, Any], *, audited: bool = True) -> None:
    steps: list[Outcome] = seen["steps"]
    for step in steps:
        assert step.called and not step.is_error, step
        assert step.answer is not None
        assert_face(interface, step.answer)
    assert [step.answer["status"] for step in steps if step.answer] == [
        "confirmed",
        "shipped",
        "delivered",
    ]
    order = Order.objects.get(pk=seen["order"])
    assert (order.customer.username, order.total) == ("alice", Decimal("120.50"))
    assert (order.status, order.version, order.tracking_number) == ("delivered", 4, TRACKING)
    if audited:
        assert audit_trail(order.pk) == [
            ("create_order", "support", "mcp"),
            ("confirm_order", "support", "mcp"),
            ("ship_order", "warehouse", "mcp"),
            ("deliver_order", "warehouse", "mcp"),
        ]


async def play_s2(team: Team) -> dict[str, Any]:
    order = await team.support.create(description="S2 lamp", total=45, customer="alice")
    return {
        "order": order,
        "steps": [
            await team.support.act(order, "confirm_order", {}),
            await team.support.act(order, "cancel_order", {"reason": "inventory_failure"}),
        ],
    }


def asks_first(interface: str) -> bool:
    """Whether cancel_order asks the person on this interface's MCP tools: on every one
    (C's submit_form asks before its REST call, as the catalog's tools do)."""
    return True


def cancelling(order_id: int, description: str, total: str, before: str) -> str:
    """What the person reads before cancel_order runs: the consequence and the change."""
    return (
        f"Order #{order_id} ({total} EUR, {description}) will be cancelled; this cannot be "
        f"undone.\nChange: status: {before} → cancelled."
    )


def check_asked(server: Server, messages: list[str]) -> None:
    """The support agent's person was asked exactly these, in order, and only to confirm;
    nobody else was asked anything."""
    assert [(asked.username, asked.message) for asked in server.asked] == [
        ("support", message) for message in messages
    ]
    for asked in server.asked:
        assert asked.schema["required"] == ["confirm"]
        assert asked.schema["properties"]["confirm"]["type"] == "boolean"


def check_refused_unasked(step: Outcome, message: str) -> None:
    """A client that cannot ask its person (the legacy handshake) is refused: the
    consequence said, nothing ran."""
    assert step.called and step.is_error and step.answer is not None, step
    problem = step.answer
    assert (problem["code"], problem["status"]) == ("confirmation_required", 428)
    consequence, change = message.split("\nChange: ")
    assert problem["consequence"] == consequence
    assert problem["detail"].startswith(f"{consequence} ({change[:-1]}).")
    assert "Nothing ran." in problem["detail"]
    assert problem["preview"]["stateChange"]["to"] == "cancelled"


def check_s2(interface: str, seen: dict[str, Any], server: Server, *, legacy: bool = False) -> None:
    steps: list[Outcome] = seen["steps"]
    order = Order.objects.get(pk=seen["order"])
    if interface == "B":
        # B knew before it called which of the two asks the person first.
        names = {"confirm_order": False, "cancel_order": True}
        for step, (name, asks) in zip(steps, names.items(), strict=True):
            (affordance,) = [a for a in step.read["affordances"] if a["name"] == name]
            assert affordance.get("confirmationRequired", False) is asks, affordance
    message = cancelling(order.pk, "S2 lamp", "45.00", "confirmed")
    if legacy and asks_first(interface):
        confirmed, cancel = steps
        assert confirmed.called and not confirmed.is_error and confirmed.answer is not None
        assert_face(interface, confirmed.answer)
        assert confirmed.answer["status"] == "confirmed"
        check_refused_unasked(cancel, message)
        assert (order.status, order.version) == ("confirmed", 2)
        assert [name for name, *_ in audit_trail(order.pk)] == ["create_order", "confirm_order"]
        return
    for step in steps:
        assert step.called and not step.is_error, step
        assert step.answer is not None
        assert_face(interface, step.answer)
    assert [step.answer["status"] for step in steps if step.answer] == ["confirmed", "cancelled"]
    assert (order.status, order.version) == ("cancelled", 3)
    assert [name for name, *_ in audit_trail(order.pk)] == [
        "create_order",
        "confirm_order",
        "cancel_order",
    ]
    if not legacy:
        check_asked(server, [message] if asks_first(interface) else [])


async def play_s3(team: Team, interface: str) -> dict[str, Any]:
    order = await team.support.create(description="S3 rug", total=80, customer="alice")
    seen: dict[str, Any] = {
        "order": order,
        "ship": await team.warehouse.act(order, "ship_order", {"trackingNumber": TRACKING}),
    }
    if interface == "C":
        seen["probe"] = await team.warehouse.probe(
            order, "ship_order", {"trackingNumber": TRACKING}
        )
    return seen


def check_s3(interface: str, seen: dict[str, Any]) -> None:
    ship: Outcome = seen["ship"]
    if interface == "A":
        # A is told nothing in advance: it tries and is refused with the reason.
        assert ship.called and ship.is_error and ship.answer is not None
        assert (ship.answer["code"], ship.answer["reason"]) == (
            "operation_not_available",
            "not_confirmed",
        )
        assert "current" not in ship.answer
    elif interface == "B":
        # B sees it does not apply, and why, and does not call.
        assert not ship.called
        assert "ship_order" not in [a["name"] for a in ship.read["affordances"]]
        unavailable = {a["name"]: a["reason"] for a in ship.read["unavailableAffordances"]}
        assert unavailable["ship_order"] == "not_confirmed"
    else:
        # C finds no such template; forcing it anyway is refused with the core's reason.
        assert not ship.called
        assert "ship_order" not in ship.read["_templates"]
        problem, is_error = seen["probe"]
        assert is_error
        assert (problem["code"], problem["reason"]) == (
            "operation_not_available",
            "not_confirmed",
        )
        assert "current" not in problem
    order = Order.objects.get(pk=seen["order"])
    assert (order.status, order.version, order.tracking_number) == ("pending", 1, None)
    assert [name for name, *_ in audit_trail(order.pk)] == ["create_order"]


async def play_s4(team: Team) -> dict[int, str]:
    return await team.support.statuses()


def check_s4(report: dict[int, str]) -> None:
    assert report == dict(Order.objects.values_list("pk", "status"))


async def play_s6(team: Team) -> dict[str, Any]:
    orders = [
        await team.support.create(description=f"S6 chair {n}", total=30 + n, customer="alice")
        for n in range(3)
    ]
    steps = [await team.support.act(order, "confirm_order", {}) for order in orders[:2]]
    steps.append(await team.support.act(orders[2], "cancel_order", {"reason": "customer_request"}))
    return {"orders": orders, "steps": steps, "report": await team.support.report(orders)}


def check_s6(interface: str, seen: dict[str, Any], server: Server, *, legacy: bool = False) -> None:
    first, second, third = seen["orders"]
    message = cancelling(third, "S6 chair 2", "32.00", "pending")
    *confirms, cancel = seen["steps"]
    refused = legacy and asks_first(interface)
    for step in confirms if refused else seen["steps"]:
        assert step.called and not step.is_error, step
        assert_face(interface, step.answer)
    if refused:
        check_refused_unasked(cancel, message)
    expected = {first: "confirmed", second: "confirmed", third: "cancelled"}
    if refused:
        expected[third] = "pending"
    assert seen["report"] == expected
    stored = Order.objects.filter(pk__in=seen["orders"])
    assert {order.pk: (order.status, order.version) for order in stored} == {
        pk: (status, 1 if status == "pending" else 2) for pk, status in expected.items()
    }
    if not legacy:
        check_asked(server, [message] if asks_first(interface) else [])


def add_orders(count: int) -> None:
    """Enough orders that a list takes more than one page (50 by default)."""
    alice = Order.objects.filter(customer__username="alice").first()
    assert alice is not None
    states = list(OrderStatus)
    Order.objects.bulk_create(
        Order(
            customer=alice.customer,
            description=f"Filler {n}",
            total=Decimal(10 + n),
            status=states[n % len(states)],
            payment_status="authorized",
        )
        for n in range(count)
    )


# --- S1-S6 on each interface (auto mode: 2026-07-28) -------------------------------------


@pytest.mark.parametrize("interface", INTERFACES)
def test_s1_create_confirm_ship_deliver_ends_delivered(server: Server, interface: str) -> None:
    async def play() -> dict[str, Any]:
        async with server.team(interface) as team:
            return await play_s1(team)

    check_s1(interface, server.run(play))
    assert server.asked == []  # nothing here asks the person


@pytest.mark.parametrize("interface", INTERFACES)
def test_s2_create_confirm_cancel_ends_cancelled(server: Server, interface: str) -> None:
    async def play() -> dict[str, Any]:
        async with server.team(interface) as team:
            return await play_s2(team)

    check_s2(interface, server.run(play), server)


@pytest.mark.parametrize("interface", INTERFACES)
def test_s3_shipping_a_pending_order_fails_and_leaves_it_pending(
    server: Server, interface: str
) -> None:
    async def play() -> dict[str, Any]:
        async with server.team(interface) as team:
            return await play_s3(team, interface)

    check_s3(interface, server.run(play))


@pytest.mark.parametrize("interface", INTERFACES)
def test_s4_listed_statuses_match_the_database_across_pages(server: Server, interface: str) -> None:
    add_orders(45)  # 57 orders: the list has a second page

    async def play() -> dict[int, str]:
        async with server.team(interface) as team:
            return await play_s4(team)

    report = server.run(play)

    assert len(report) == Order.objects.count() == 57
    check_s4(report)


@pytest.mark.parametrize("interface", INTERFACES)
def test_s5_the_scenario_survives_renaming_the_confirm_url(server: Server, interface: str) -> None:
    untouched = server.pk("demo-01")  # pending, payment authorized: confirm applies

    async def tools() -> list[dict[str, Any]]:
        async with server.client("support", interface, "auto") as client:
            listed = await client.list_tools(cache_mode="bypass")
        return [tool.model_dump(mode="json", by_alias=True) for tool in listed.tools]

    before = server.run(tools)
    with override_settings(ROOT_URLCONF="experiment.urls_renamed"):
        clear_url_caches()
        reset_catalog()

        async def play() -> tuple[list[dict[str, Any]], dict[str, Any], int]:
            after = await tools()
            async with server.team(interface) as team:
                seen = await play_s1(team)
            old_route = await server.rest_post("support", f"/api/orders/{untouched}/confirm/")
            return after, seen, old_route

        after, seen, old_route = server.run(play)
    clear_url_caches()

    check_s1(interface, seen, audited=False)
    # Same tools (stable verbs); only what the documents point at has moved.
    assert after == before
    assert old_route == 404
    still = server.demo.order("demo-01")
    assert (still.status, still.version) == ("pending", 1)
    confirm: Outcome = seen["steps"][0]
    approve = f"/api/orders/{seen['order']}/approve/"
    if interface == "B":
        (affordance,) = [a for a in confirm.read["affordances"] if a["name"] == "confirm_order"]
        assert affordance["target"] == f"{server.url}{approve}"
    elif interface == "C":
        assert confirm.read["_templates"]["confirm_order"]["target"] == f"{server.url}{approve}"
    assert "/confirm/" not in json.dumps(confirm.read)


@pytest.mark.parametrize("interface", INTERFACES)
def test_s6_three_orders_two_confirmed_one_cancelled(server: Server, interface: str) -> None:
    async def play() -> dict[str, Any]:
        async with server.team(interface) as team:
            return await play_s6(team)

    check_s6(interface, server.run(play), server)


# --- the same over the initialize handshake (legacy: 2025-11-25) -------------------------


@pytest.mark.parametrize("interface", INTERFACES)
def test_the_scenarios_pass_over_the_legacy_handshake_too(server: Server, interface: str) -> None:
    async def play() -> dict[str, Any]:
        async with server.team(interface, "legacy") as team:
            return {
                "S1": await play_s1(team),
                "S2": await play_s2(team),
                "S3": await play_s3(team, interface),
                "S6": await play_s6(team),
                "S4": await play_s4(team),
            }

    seen = server.run(play)

    check_s1(interface, seen["S1"], audited=False)
    # Cancelling asks the person first, and a 2025-11-25 client cannot be asked (even one
    # that could show a form): on A and B the cancel is refused and the order left as it
    # was; the person cancels in a client that asks them, or in the admin.
    check_s2(interface, seen["S2"], server, legacy=True)
    check_s3(interface, seen["S3"])
    check_s6(interface, seen["S6"], server, legacy=True)
    check_s4(seen["S4"])
    assert server.asked == []
    methods = [exchange.sent.get("method") for exchange in server.recorder.exchanges]
    # Two sessions (support, warehouse), each with its own handshake and no discovery.
    assert methods.count("initialize") == methods.count("notifications/initialized") == 2
    assert "server/discover" not in methods
    versions = {
        e.version for e in server.recorder.exchanges if e.sent.get("method") != "initialize"
    }
    assert versions == {LEGACY}


# --- what differs between the profiles -----------------------------------------------------


def test_a_reads_plain_objects_and_refusals_without_current_where_b_has_both(
    server: Server,
) -> None:
    pending, shipped = server.pk("demo-01"), server.pk("demo-06")

    async def play() -> dict[str, dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for interface in ("A", "B"):
            async with server.client("support", interface, "auto") as client:
                agent = AGENTS[interface](client)
                await agent.start()
                stale, stale_error = await agent.call(
                    "cancel_order",
                    {"orderId": pending, "reason": "customer_request", "expectedVersion": 99},
                )
                refused, refused_error = await agent.call("confirm_order", {"orderId": shipped})
                assert stale_error and refused_error
                seen[interface] = {
                    "read": await agent.read(pending),
                    "page": await agent.ok("list_orders", {"status": "pending"}),
                    "stale": stale,
                    "refused": refused,
                }
        return seen

    seen = server.run(play)
    a, b = seen["A"], seen["B"]

    # Reads: B's representation is A's plus the two lists; A's has neither.
    assert set(b["read"]) >= AFFORDANCE_LISTS
    assert not AFFORDANCE_LISTS & set(a["read"])
    assert a["read"] == {k: v for k, v in b["read"].items() if k not in AFFORDANCE_LISTS}
    assert all(not AFFORDANCE_LISTS & set(order) for order in a["page"]["results"])
    assert all(set(order) >= AFFORDANCE_LISTS for order in b["page"]["results"])
    # Refusals: the same code and reason; only B's carry `current`.
    assert a["stale"]["code"] == "stale_version"
    assert a["refused"]["code"] == "operation_not_available"
    assert a["refused"]["reason"] == "already_shipped"
    for name in ("stale", "refused"):
        assert "current" not in a[name]
        assert b[name]["current"]["id"] == (pending if name == "stale" else shipped)
        assert set(b[name]["current"]) >= AFFORDANCE_LISTS
        assert {k: v for k, v in b[name].items() if k != "current"} == a[name]
    assert (server.demo.order("demo-01").version, server.demo.order("demo-06").version) == (1, 1)


def test_c_lists_the_same_two_tools_byte_for_byte_for_every_role(server: Server) -> None:
    async def play() -> dict[str, list[list[str]]]:
        names: dict[str, list[list[str]]] = {}
        for mode in ("auto", "legacy"):
            for role in ROLES:
                async with server.client(role, "C", mode) as client:
                    for _ in range(2):
                        listed = await client.list_tools(cache_mode="bypass")
                        names.setdefault(role, []).append([tool.name for tool in listed.tools])
        return names

    names = server.run(play)

    assert names == {role: [["read_resource", "submit_form"]] * 4 for role in ROLES}
    # The 2026-07-28 and 2025-11-25 results differ in their envelope fields only; within
    # each revision every role gets the very same bytes, on every call.
    modern = server.recorder.raw_results("/mcp/forms", "tools/list", version=MODERN)
    legacy = server.recorder.raw_results("/mcp/forms", "tools/list", version=LEGACY)
    assert len(modern) == len(legacy) == 2 * len(ROLES)
    assert len(set(modern)) == 1 and len(set(legacy)) == 1


def test_c_refuses_urls_outside_the_api_and_templates_not_offered(server: Server) -> None:
    shipped = server.pk("demo-06")

    async def play() -> dict[str, Any]:
        async with server.client("support", "C", "auto") as client:
            agent = FormsAgent(client)
            await agent.start()
            outside = []
            for url in ("http://example.com/api/orders/1/", f"{server.url}/admin/", "/admin/"):
                outside.append(await agent.call("read_resource", {"url": url}))
                outside.append(
                    await agent.call(
                        "submit_form",
                        {"url": url, "template": "cancel_order", "arguments": {}},
                    )
                )
            document = await agent.read(await agent.locate(shipped))
            not_offered = await agent.probe(shipped, "confirm_order", {})
            made_up = await agent.probe(shipped, "launch_rockets", {})
            return {
                "outside": outside,
                "templates": document["_templates"],
                "not_offered": not_offered,
                "made_up": made_up,
            }

    seen = server.run(play)

    for problem, is_error in seen["outside"]:
        assert is_error
        assert problem["code"] == "validation_error"
        assert "url" in problem["errors"]
    assert "confirm_order" not in seen["templates"]
    problem, is_error = seen["not_offered"]
    assert is_error
    # Not offered now, for a caller who may know the operation: the core says why.
    assert (problem["code"], problem["reason"]) == ("operation_not_available", "already_shipped")
    made_up, is_error = seen["made_up"]
    assert is_error
    assert made_up["code"] == "not_found"
    assert server.demo.order("demo-06").version == 1
