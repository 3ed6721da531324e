"""The experiment's host (experiment.host): what a model is told and shown, on every arm.

The arms may differ in the affordance layer only: one procedure for all, nothing a chat
model cannot use, no affordance wording in the tool definitions A shares with B, no
``current`` on anyone's refusals, calls the host cannot run answered as errors, a quoted
affordance list never run as calls, and B-focus narrowing what the model sees.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo
from experiment.agents.llm import SYSTEM_PROMPT
from experiment.client import tool_definitions
from experiment.host import (
    ARM_NOTES,
    PROCEDURE,
    Focus,
    affordance_names,
    instructions,
    neutral_definitions,
    parse_calls,
    shown_result,
)
from tests.mcp_wire import Wire

# --- what every arm is told ---------------------------------------------------------------

ARMS = ("A", "B", "B-compact", "B-focus", "C")


def test_every_arm_gets_the_same_procedure_and_nothing_a_model_cannot_use() -> None:
    told = {arm: instructions(SYSTEM_PROMPT, arm) for arm in ARMS}
    for arm, text in told.items():
        assert text.startswith(SYSTEM_PROMPT + "\n" + PROCEDURE), arm
        # A chat model has no _meta, no resources/read, no tools/list.
        for unusable in (
            "_meta",
            "idempotencyKey",
            "resources/read",
            "tools/list",
            "resource_link",
        ):
            assert unusable not in text, (arm, unusable)
    # The notes describe answers; the steps are the procedure's alone.
    for arm, note in ARM_NOTES.items():
        assert not re.search(r"^\s*\d+\.", note, re.MULTILINE), arm
        assert "read before you act" not in note.lower(), arm
    assert ARM_NOTES["A"] == ""
    assert "validForVersion" in ARM_NOTES["B"] and "affordances" in ARM_NOTES["B-focus"]
    assert "_templates" in ARM_NOTES["C"]


def _tools(demo: Demo, path: str, role: str = "admin") -> list[dict[str, Any]]:
    return Wire(str(AccessToken.for_user(demo.users[role])), path=path).tools()


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "alice"])
def test_the_tool_definitions_are_the_same_on_a_and_b_and_speak_of_no_affordances(
    demo: Demo, role: str
) -> None:
    shown = {}
    for arm, path in (("A", "/mcp/static"), ("B", "/mcp"), ("B-compact", "/mcp/compact")):
        listed = _tools(demo, path, role)
        shown[arm] = neutral_definitions(tool_definitions(listed), listed)
        text = json.dumps(shown[arm])
        assert not re.search(r"affordance|validForVersion|read before you act", text, re.I), arm
    assert shown["A"] == shown["B"] == shown["B-compact"]
    by_name = {d["function"]["name"]: d["function"] for d in shown["A"]}
    assert by_name["get_order"]["description"].startswith("Read one order you may see")
    version = by_name["cancel_order"]["parameters"]["properties"]["expectedVersion"]
    assert "`version` as you read it" in version["description"]
    # The rest of a write's description stays: its rules are the same on every arm.
    assert "requires_supervisor" in by_name["cancel_order"]["description"]


@pytest.mark.django_db
def test_neutral_definitions_leave_the_servers_list_and_cs_tools_as_they_are(demo: Demo) -> None:
    listed = _tools(demo, "/mcp")
    before = json.dumps(listed)
    neutral_definitions(tool_definitions(listed), listed)
    assert json.dumps(listed) == before  # a copy: the session's list is untouched
    forms = _tools(demo, "/mcp/forms")
    assert neutral_definitions(tool_definitions(forms), forms) == tool_definitions(forms)


def test_a_refusal_is_shown_without_current_and_without_resource_links() -> None:
    problem = {
        "type": "urn:example:problem:stale-version",
        "title": "Stale version",
        "status": 412,
        "code": "stale_version",
        "detail": "You acted on version 1; the current version is 2.",
        "current": {"id": 5, "status": "cancelled", "affordances": []},
    }
    result = {
        "content": [
            {"type": "text", "text": json.dumps(problem)},
            {"type": "resource_link", "uri": "http://x/api/orders/5/", "name": "order-5"},
        ],
        "isError": True,
    }
    shown = shown_result(result)
    assert json.loads(shown) == {k: v for k, v in problem.items() if k != "current"}
    # A representation is shown as the server wrote it (an object may have a field
    # named current: only a problem's goes).
    body = {"id": 5, "current": True, "status": "pending"}
    text = json.dumps(body)
    assert shown_result({"content": [{"type": "text", "text": text}]}) == text


# --- calls written as text ------------------------------------------------------------------

FULL_ENTRY = {
    "operation": "urn:example:operation:cancel-order:v1",
    "name": "cancel_order",
    "title": "Cancel order",
    "method": "POST",
    "target": "http://x/api/orders/13/cancel/",
    "arguments": {"orderId": 13},
    "constraints": {},
    "validForVersion": 1,
}
COMPACT_ENTRY = {
    "name": "confirm_order",
    "target": "http://x/api/orders/13/confirm/",
    "arguments": {"orderId": 13},
    "validForVersion": 1,
}


def _names(content: str) -> list[str]:
    return [call["function"]["name"] for call in parse_calls(content).calls]


@pytest.mark.parametrize(
    "quoted",
    [
        json.dumps([FULL_ENTRY, {**FULL_ENTRY, "name": "confirm_order"}]),
        json.dumps([COMPACT_ENTRY, {**COMPACT_ENTRY, "name": "cancel_order"}]),
        "The order offers these:\n```json\n" + json.dumps([COMPACT_ENTRY]) + "\n```",
        json.dumps(FULL_ENTRY),
        # A whole representation: its affordance entries are inside it.
        json.dumps({"id": 13, "status": "pending", "affordances": [FULL_ENTRY, COMPACT_ENTRY]}),
        # A list that mixes a call with a quoted entry is quoted data too.
        json.dumps([{"name": "get_order", "arguments": {"orderId": 13}}, COMPACT_ENTRY]),
    ],
)
def test_a_quoted_affordance_list_is_never_run(quoted: str) -> None:
    assert _names(quoted) == []


def test_calls_in_the_chat_apis_shape_and_with_an_id_are_calls() -> None:
    function = {"type": "function", "function": {"name": "get_order", "arguments": "{}"}}
    assert _names(json.dumps(function)) == ["get_order"]
    assert _names('{"id": "c1", "name": "list_orders", "arguments": {}}') == ["list_orders"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('<tool_call>\n{"name": "get_order", "arguments": {orderId: 3}}\n</tool_call>', "JSON"),
        ('```json\n{"name": "get_order", "arguments": {"orderId": 3}\n```', "JSON"),
        ('{"name": "get_order"}', '"arguments"'),
        ('{"name": "get_order", "arguments": [3]}', "not a JSON object"),
        ('{"name": "get_order", "arguments": "orderId=3"}', "not JSON"),
        ('{"name": "get order!", "arguments": {}}', "not a tool name"),
        ('{"tool": "get_order", "args": {"orderId": 3}}', '"name" and "arguments"'),
        (json.dumps([FULL_ENTRY]), "one"),
    ],
)
def test_a_message_that_tries_to_be_a_call_and_cannot_be_read_says_why(
    content: str, why: str
) -> None:
    parsed = parse_calls(content)
    assert parsed.calls == []
    assert parsed.unreadable is not None and why in parsed.unreadable, parsed


@pytest.mark.parametrize(
    "answer",
    [
        "Order #13 is confirmed; it needs a supervisor to cancel.",
        "#13: pending\n#14: cancelled",
        "The order offers cancel_order {orderId: 13} but I left it.",
    ],
)
def test_an_answer_in_words_is_an_answer(answer: str) -> None:
    assert parse_calls(answer).calls == [] and parse_calls(answer).unreadable is None


# --- B-focus -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_focus_starts_with_reads_and_creates_and_grows_with_the_affordances_read(
    demo: Demo,
) -> None:
    listed = _tools(demo, "/mcp", "support")
    focus = Focus()
    shown = {tool["name"] for tool in listed if focus.shows(tool)}
    assert shown == {
        "get_order",
        "list_orders",
        "create_order",
        "get_purchase_request",
        "list_purchase_requests",
    }
    order = {
        "id": 13,
        "affordances": [FULL_ENTRY],
        "unavailableAffordances": [{"name": "confirm_order", "reason": "payment_not_authorized"}],
    }
    focus.learn({"count": 1, "results": [order]})
    assert affordance_names(order) == {"cancel_order"}
    shown = {tool["name"] for tool in listed if focus.shows(tool)}
    assert "cancel_order" in shown and "confirm_order" not in shown
