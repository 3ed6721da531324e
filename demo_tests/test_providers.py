"""Every tool of every demo role, as the big model providers take it, and called so.

The tools are listed over the live MCP endpoint (the official ``mcp`` SDK), role by role,
orders and procurement. Each is converted the way the frameworks hand tools to a
provider — langchain-core's ``convert_to_openai_tool(strict=True)``, openai-agents'
``ensure_strict_json_schema`` (as its MCP support calls it), pydantic-ai's OpenAI
transformer (strict) and Google transformers, and google-genai's own ``Schema`` and
``FunctionDeclaration`` — and must convert without an error. Then each tool is called
the way a strict-mode model must fill it: every property present, each optional one
``null``, each required one a value its schema (and the object's constraints) allow —
and every call must succeed (docs/protocol.md#mcp, #execution). An operation that asks
the person first (docs/protocol.md#confirmations) shows its form through the client's
``elicitation_callback``, where a stand-in for the person accepts it.

What each check found before issue 38: google-genai refused all 32 tools (``$schema``)
and 4 even after pydantic-ai's Google transformer (``multipleOf``, and
``exclusiveMaximum`` without it); every optional argument's strict-mode ``null`` was
refused (``None is not of type 'string'``).
"""

from __future__ import annotations

import asyncio
import copy
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, timedelta
from typing import Any

import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult, Tool
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from demo_tests.conftest import PROCUREMENT_ROLES, ROLES, Demo, ProcurementDemo

# transaction=True: the live server's threads must see the demo data. serialized_rollback:
# the flush after a transactional test drops the groups the migrations created.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

EVERY_ROLE = tuple(dict.fromkeys((*ROLES, *PROCUREMENT_ROLES)))
# Who creates with every optional argument null: a customer orders for herself (staff
# must name the customer, orders.rules.create_constraints), a requester for herself.
CREATORS = {"create_order": "alice", "create_purchase_request": "rita"}
# The conversions that are JSON Schema (the others are Gemini's OpenAPI 3.0 subset).
JSON_SCHEMAS = ("langchain", "openai-agents", "pydantic-ai-openai", "pydantic-ai-google")
# Values for required text whose pattern a generic sample would not match.
SAMPLES = {"trackingNumber": "TRACK12345", "quoteReference": "Q-2041"}


def conversions(tool: Tool) -> dict[str, Any]:
    """The tool's parameters as each converter makes them; raises what a converter raises."""
    # Imported here, by the worker that runs this module's test: about two seconds of
    # imports that every pytest-xdist worker would otherwise pay while collecting.
    from agents.strict_schema import ensure_strict_json_schema
    from google.genai import types as genai
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from pydantic_ai.profiles.google import (
        GoogleJsonSchemaTransformer,
        GoogleOpenAPISchemaTransformer,
    )
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    schema = tool.input_schema
    made: dict[str, Any] = {}
    made["langchain"] = convert_to_openai_tool(
        {"name": tool.name, "description": tool.description, "parameters": copy.deepcopy(schema)},
        strict=True,
    )["function"]["parameters"]
    # As openai-agents' MCP support converts (agents.mcp.util): open objects refused.
    made["openai-agents"] = ensure_strict_json_schema(
        copy.deepcopy(schema), _reject_open_objects=True
    )
    made["pydantic-ai-openai"] = OpenAIJsonSchemaTransformer(
        copy.deepcopy(schema), strict=True
    ).walk()
    for name, transformer in (
        ("pydantic-ai-google", GoogleJsonSchemaTransformer),
        ("pydantic-ai-google-openapi", GoogleOpenAPISchemaTransformer),
    ):
        made[name] = transformer(copy.deepcopy(schema)).walk()
        genai.FunctionDeclaration(
            name=tool.name,
            description=tool.description,
            parameters=genai.Schema.model_validate(made[name]),
        )
    # google-genai alone, the tool's schema as it is.
    made["google-genai"] = genai.Schema.model_validate(copy.deepcopy(schema))
    genai.FunctionDeclaration(
        name=tool.name, description=tool.description, parameters=made["google-genai"]
    )
    return made


def sample(name: str, schema: dict[str, Any], narrowed: dict[str, Any], seen: list[Any]) -> Any:
    """A value a model would fill a required argument with: the first allowed choice, the
    lowest allowed number, a date ahead, text a listed object holds under that name."""
    branches = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
    if "const" in narrowed:
        return narrowed["const"]
    for node in (narrowed, *branches):
        if node.get("enum"):
            return node["enum"][0]
    types = {branch.get("type") for branch in branches}
    if types & {"integer", "number"}:
        lows = [n["minimum"] for n in (narrowed, *branches) if "minimum" in n]
        return max(lows) if lows else 1
    if any(branch.get("format") == "date" for branch in branches):
        return (date.today() + timedelta(days=60)).isoformat()
    held = [item[name] for item in seen if isinstance(item.get(name), str) and item[name]]
    value = SAMPLES.get(name) or (held[0] if held else "Strict-mode sample")
    for branch in branches:
        assert re.search(branch.get("pattern", ""), value), (name, value)
    return value


class Live:
    def __init__(self, url: str, demo: Demo) -> None:
        self.url = url
        self.tokens = {role: str(AccessToken.for_user(demo.users[role])) for role in ROLES}
        self.calling = ""  # the tool being called, for the forms it shows
        self.asked: list[tuple[str, Any]] = []

    async def person(self, context: Any, params: Any) -> ElicitResult:
        """The stand-in for the person: records the form, accepts one that only asks to
        confirm (every required input was given; anything more is a failure)."""
        self.asked.append((self.calling, params))
        if set(params.requested_schema["properties"]) != {"confirm"}:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"confirm": True})

    @asynccontextmanager
    async def client(self, role: str) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(
                streamable_http_client(f"{self.url}/mcp", http_client=http),
                elicitation_callback=self.person,
            ) as client,
        ):
            yield client


async def _tools(client: Client) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return tools


def run(scenario: Any) -> Any:
    """``asyncio.run``, an error inside a client's task groups raised as itself: pytest
    plugins that walk nested exception groups (schemathesis') can take minutes on them."""
    try:
        return asyncio.run(scenario)
    except BaseExceptionGroup as group:
        error: BaseException = group
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        raise error from None


def test_every_tool_converts_and_takes_a_strict_mode_call(
    live_server: Any, demo: Demo, procurement: ProcurementDemo
) -> None:
    live = Live(live_server.url, demo)
    live.tokens.update(
        {role: str(AccessToken.for_user(user)) for role, user in procurement.users.items()}
    )

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {"failures": [], "calls": {}}
        listed: dict[str, list[Tool]] = {}
        for role in EVERY_ROLE:
            async with live.client(role) as client:
                listed[role] = await _tools(client)
        tools: dict[str, Tool] = {}
        for role, role_tools in listed.items():
            for tool in role_tools:
                # One tool per operation, whoever lists it.
                assert tools.setdefault(tool.name, tool) == tool, (role, tool.name)
        seen["tools"] = list(tools)

        strict: dict[str, dict[str, Any]] = {}
        for tool in tools.values():
            try:
                strict[tool.name] = conversions(tool)["openai-agents"]
            except Exception as error:  # each failure is reported, not the first only
                seen["failures"].append((tool.name, f"{type(error).__name__}: {error}"))
        if seen["failures"]:
            return seen

        def fill(
            name: str, bound: dict[str, Any], narrowed: dict[str, Any], objects: list[Any]
        ) -> dict[str, Any]:
            """Every property: bound, a sample for a required one, null for the others;
            valid for every converted schema."""
            schema = strict[name]
            required = set(tools[name].input_schema.get("required", ()))
            arguments = {}
            for prop, prop_schema in schema["properties"].items():
                if prop in bound:
                    arguments[prop] = bound[prop]
                elif prop in required:
                    arguments[prop] = sample(prop, prop_schema, narrowed.get(prop, {}), objects)
                else:
                    arguments[prop] = None
            for label, made in conversions(tools[name]).items():
                if label in JSON_SCHEMAS:
                    assert Draft202012Validator(made).is_valid(arguments), (label, arguments)
            return arguments

        async def call(client: Client, role: str, name: str, arguments: dict[str, Any]) -> Any:
            live.calling = name
            result = await client.call_tool(name, arguments)
            seen["calls"][name] = (role, arguments, result.is_error, result.structured_content)
            return result.structured_content

        # Reads first, every filter and paging argument null: what each role sees.
        listings: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for role, role_tools in listed.items():
            async with live.client(role) as client:
                for tool in role_tools:
                    if tool.name.startswith("list_"):
                        page = await call(client, role, tool.name, fill(tool.name, {}, {}, []))
                        listings.setdefault(tool.name, []).extend(
                            (role, item) for item in page["results"]
                        )
        objects = [item for pairs in listings.values() for _, item in pairs]

        # Each read of one object on the first object its list showed; each create as a
        # caller it needs no optional argument from.
        plan: list[tuple[str, str, dict[str, Any]]] = []
        used: set[str] = set()
        for tool in tools.values():
            bound: dict[str, Any] = {}
            if tool.name.startswith("get_"):
                # get_order reads what list_orders lists.
                stem = "list_" + tool.name.removeprefix("get_")
                (pairs,) = [p for name, p in listings.items() if name.startswith(stem)]
                role, item = pairs[0]
                (key,) = tool.input_schema["required"]
                bound = {key: item["id"]}
            elif tool.name.startswith("create_"):
                role = CREATORS[tool.name]
            else:
                continue
            plan.append((role, tool.name, fill(tool.name, bound, {}, objects)))
        # Each transition on an object it applies to now, one object each (the rarest
        # first: expedite and insure apply to few), as a role it is offered to there.
        offers = {
            tool.name: [
                (role, item, affordance)
                for pairs in listings.values()
                for role, item in pairs
                for affordance in item.get("affordances", [])
                if affordance["name"] == tool.name
            ]
            for tool in tools.values()
            if not tool.name.startswith(("get_", "list_", "create_"))
        }
        for name in sorted(offers, key=lambda name: len({i["url"] for _, i, _ in offers[name]})):
            found = next((o for o in offers[name] if o[1]["url"] not in used), None)
            if found is None:
                seen["failures"].append((name, "no object it applies to"))
                continue
            role, item, affordance = found
            used.add(item["url"])
            narrowed = (affordance.get("constraints") or {}).get("properties", {})
            plan.append((role, name, fill(name, affordance["arguments"], narrowed, objects)))
        for role in dict.fromkeys(role for role, *_ in plan):
            async with live.client(role) as client:
                for who, name, arguments in plan:
                    if who == role:
                        await call(client, role, name, arguments)
        return seen

    confirming = {operation.name for operation in get_catalog() if operation.confirmation_required}
    seen = run(scenario())

    assert seen["failures"] == []
    assert len(seen["tools"]) == 27  # 8 of the orders, 19 of procurement
    refused = {name: call for name, call in seen["calls"].items() if call[2]}
    assert refused == {}
    assert set(seen["calls"]) == set(seen["tools"])
    # The person was asked once for each operation that asks first, and for nothing else.
    assert sorted(name for name, _ in live.asked) == sorted(confirming)
    assert confirming == {"cancel_order", "refund_order", "reject_purchase_request"}
    for _, params in live.asked:
        assert params.mode == "form" and "Change: " in params.message
