"""The compact representation (``?affordances=compact``, MCP ``/mcp/compact``).

Affordance entries carry only what varies per object — ``name`` (the catalog entry and
MCP tool it refers to), ``target``, ``arguments``, ``constraints`` unless empty,
``validForVersion`` — and unavailable entries ``name`` and ``reason``: the full entries
less what the catalog says, nothing else removed, nothing added.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from rest_framework.test import APIClient

from affordances.entries import CATALOG_KEYS
from demo_tests.conftest import Demo
from demo_tests.test_interfaces_http import wire_for

pytestmark = pytest.mark.django_db

COMPACT, HYBRID = "/mcp/compact", "/mcp"


def api(demo: Demo, username: str) -> APIClient:
    client = APIClient()
    client.force_authenticate(demo.users[username])
    return client


def less_the_catalog(entry: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in entry.items() if k not in CATALOG_KEYS}
    if kept.get("constraints") == {}:
        del kept["constraints"]
    return kept


def assert_compact_of(compact: dict[str, Any], full: dict[str, Any]) -> None:
    assert {k: v for k, v in compact.items() if not k.endswith("ffordances")} == {
        k: v for k, v in full.items() if not k.endswith("ffordances")
    }
    assert compact["affordances"] == [less_the_catalog(e) for e in full["affordances"]]
    assert compact["unavailableAffordances"] == [
        {"name": e["name"], "reason": e["reason"]} for e in full["unavailableAffordances"]
    ]


def test_a_compact_order_is_the_full_one_less_what_the_catalog_says(demo: Demo):
    support = api(demo, "admin")  # every capability: pending orders can't ship yet
    for key in ("demo-01", "demo-05"):  # pending (narrowed cancel reasons), and another
        pk = demo.orders[key].pk
        full = support.get(f"/api/orders/{pk}/").json()
        compact = support.get(f"/api/orders/{pk}/?affordances=compact").json()
        assert full["affordances"] and full["unavailableAffordances"]
        assert_compact_of(compact, full)
        assert len(json.dumps(compact)) < len(json.dumps(full))
    # Somewhere a constraint narrows, and it is kept.
    listed = support.get("/api/orders/?affordances=compact&page_size=200").json()["results"]
    assert any("constraints" in e for order in listed for e in order["affordances"])
    full_list = support.get("/api/orders/?page_size=200").json()["results"]
    for compact, full in zip(listed, full_list, strict=True):
        assert_compact_of(compact, full)


def test_a_transition_answers_in_the_shape_asked_for(demo: Demo):
    pk = demo.orders["demo-01"].pk
    answer = api(demo, "support").post(
        f"/api/orders/{pk}/confirm/?affordances=compact", {}, format="json"
    )
    assert answer.status_code == 200
    for entry in answer.json()["affordances"] + answer.json()["unavailableAffordances"]:
        assert not set(entry) & set(CATALOG_KEYS)


def test_the_compact_endpoint_offers_bs_tools_with_a_compact_output_schema(demo: Demo):
    compact = wire_for(demo, COMPACT, "support").tools()
    hybrid = wire_for(demo, HYBRID, "support").tools()

    def stable(tool: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in tool.items() if k != "outputSchema"}

    assert [stable(t) for t in compact] == [stable(t) for t in hybrid]
    get_order = next(t for t in compact if t["name"] == "get_order")
    success = get_order["outputSchema"]["anyOf"][0]["properties"]
    entry = success["affordances"]["items"]
    assert set(entry["properties"]) == {
        "name",
        "target",
        "arguments",
        "constraints",
        "validForVersion",
    }
    assert set(entry["required"]) == {"name", "target", "arguments"}
    assert success["unavailableAffordances"]["items"]["required"] == ["name", "reason"]

    wire = wire_for(demo, COMPACT, "support")
    pk = demo.orders["demo-01"].pk
    result = wire.tool("get_order", {"orderId": pk})
    body = result["structuredContent"]
    jsonschema.validate(body, get_order["outputSchema"])
    full = wire_for(demo, HYBRID, "support").tool("get_order", {"orderId": pk})
    assert_compact_of(body, full["structuredContent"])
    assert json.loads(result["content"][0]["text"]) == body
    # A full entry does not pass for a compact one, nor the other way round.
    full_tool = next(t for t in hybrid if t["name"] == "get_order")
    jsonschema.validate(full["structuredContent"], full_tool["outputSchema"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(body, full_tool["outputSchema"])


def test_a_replay_answers_in_the_shape_of_the_endpoint_asked(demo: Demo):
    pk = demo.orders["demo-01"].pk
    meta = {"affordances/idempotencyKey": "compact-replay-1"}
    params = {"name": "confirm_order", "arguments": {"orderId": pk}, "_meta": meta}
    first = wire_for(demo, HYBRID, "support").result("tools/call", params)
    again = wire_for(demo, COMPACT, "support").result("tools/call", params)
    assert again["_meta"]["affordances/replayed"] is True
    assert_compact_of(again["structuredContent"], first["structuredContent"])
    assert demo.order("demo-01").version == 2  # it ran once


def test_the_compact_instructions_say_what_is_left_out(demo: Demo):
    from affordances.mcp import COMPACT as PROFILE
    from affordances.mcp import HYBRID as FULL

    assert "absent when nothing is narrowed" in PROFILE.instructions
    assert "absent" not in FULL.instructions


def test_hal_forms_and_the_browsable_api_read_compact_entries_as_full_ones(demo: Demo):
    """Every face that renders affordances takes only what compact entries keep."""
    admin = api(demo, "admin")
    pk = demo.orders["demo-01"].pk
    hal = "application/prs.hal-forms+json"
    full = admin.get(f"/api/orders/{pk}/", HTTP_ACCEPT=hal)
    compact = admin.get(f"/api/orders/{pk}/?affordances=compact", HTTP_ACCEPT=hal)
    assert full.status_code == compact.status_code == 200
    templates = full.json()["_templates"]
    assert templates and compact.json()["_templates"] == templates
    pages = [
        admin.get(f"/api/orders/{pk}/{query}", HTTP_ACCEPT="text/html")
        for query in ("", "?affordances=compact", "?affordances=none")
    ]
    assert [page.status_code for page in pages] == [200, 200, 200]
    full_forms, compact_forms, plain_forms = (p.content.decode().count("<form") for p in pages)
    # One form per affordance (confirm, cancel) on top of the page's own.
    assert full_forms == compact_forms == plain_forms + 2


@pytest.mark.parametrize("value", ["bogus", "", "NONE", "full", "compact ", "none,compact"])
def test_an_unknown_affordances_value_is_a_validation_error(api, demo, value):
    order = demo.orders["demo-01"]
    for path in ("/api/orders/", f"/api/orders/{order.pk}/"):
        response = api("support").get(path, {"affordances": value})
        assert response.status_code == 400, (path, value, response.content[:200])
        assert response.json()["code"] == "validation_error"
        assert "affordances" in response.json()["errors"]
