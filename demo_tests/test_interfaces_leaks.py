"""No face leaks (docs/protocol.md#affordances, docs/protocol.md#mcp,
docs/protocol.md#mcp-profiles): a customer on A, B or C never sees what she may not use.

Alice (customer: she may read her own orders, create and cancel them) drives a realistic
session on each interface — lifecycle, tools, every order she can see, an allowed action
and a few forbidden ones — and every byte she receives (headers and bodies of tool
lists, results, forms, problems and protocol errors) is searched for the operations she
lacks the capability for. Then Bob reads one of Alice's orders: on every interface that is
indistinguishable from reading an order that does not exist.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from demo_tests.conftest import Demo
from demo_tests.test_interfaces_http import FORMS, HYBRID, STATIC, initialize, wire_for
from demo_tests.test_mcp_confirmations import ACCEPT, call
from orders.models import Order
from tests.mcp_wire import LEGACY, MODERN, Wire

INTERFACES = {"A": STATIC, "B": HYBRID, "C": FORMS}
VERSIONS = [LEGACY, MODERN]
LACKED = ("confirm", "ship", "deliver", "refund")

# Everything that would name an operation Alice lacks: tool names, URNs, titles, routes.
FORBIDDEN = [
    *(f"{verb}_order" for verb in LACKED),
    *(f"urn:example:operation:{verb}-order:v1" for verb in LACKED),
    *(f"{verb}-order" for verb in LACKED),
    *(f"/{verb}/" for verb in LACKED),
    "Confirm order",
    "Ship order",
    "Mark order delivered",
    "Refund order",
]


def assert_no_trace(text: str) -> None:
    for trace in FORBIDDEN:
        at = text.find(trace)
        assert at == -1, f"{trace!r} leaks in: …{text[max(at - 160, 0) : at + 60]}…"


def start(wire: Wire) -> None:
    """The lifecycle an SDK client goes through: handshake, or discovery."""
    if wire.version == MODERN:
        wire.result("server/discover")
    else:
        version, wire.version = wire.version, None
        assert initialize(wire, LEGACY).status_code == 200
        wire.version = version
        assert (
            wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        )


def pk_of(demo: Demo, key: str) -> int:
    return demo.orders[key].pk


def cancel(alice: Wire, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """cancel_order as her client calls it (docs/protocol.md#confirmations): in 2026-07-28
    it declares form elicitation, shows Alice the form and sends her acceptance back; the
    final result and the messages of the forms she was shown."""
    return asked(alice, "cancel_order", arguments)


def asked(alice: Wire, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A call of ``tool`` from her client, with her acceptance of any form it is asked."""
    result = call(alice, tool, arguments)
    shown: list[str] = []
    if result.get("resultType") == "input_required":
        shown.append(result["inputRequests"]["confirmation"]["params"]["message"])
        state = result["requestState"]
        result = call(alice, tool, arguments, inputResponses=ACCEPT, requestState=state)
    return result, shown


def body_of(answer: bytes) -> dict[str, Any]:
    return json.loads(answer.split(b"\n", 1)[1])


def anonymized(response: Any, pk: int) -> bytes:
    """A response's status, media type and body, with the order's own URL made generic."""
    assert response.status_code < 500
    head = f"{response.status_code} {response.get('Content-Type')}\n".encode()
    return head + response.content.replace(f"/orders/{pk}/".encode(), b"/orders/<id>/")


# --- Alice on A and B: the catalog's tools -------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("interface", ["A", "B"])
def test_a_customer_on_the_catalog_tools_sees_no_trace_of_what_she_lacks(
    demo: Demo, interface: str, version: str
) -> None:
    alice = wire_for(demo, INTERFACES[interface], "alice", version=version)
    start(alice)
    names = [tool["name"] for tool in alice.tools()]

    # Everything she can see: every page, every order, as tools and as resources.
    ids: list[int] = []
    page = 1
    while True:
        listed = alice.tool("list_orders", {"page": page})["structuredContent"]
        ids += [order["id"] for order in listed["results"]]
        if listed["next"] is None:
            break
        page += 1
    orders = {pk: alice.tool("get_order", {"orderId": pk})["structuredContent"] for pk in ids}
    alice.result("resources/templates/list")
    for resource in alice.result("resources/list")["resources"]:
        alice.result("resources/read", {"uri": resource["uri"]})

    # What she may do, what she may do but not now, and an argument outside her constraints.
    mine = pk_of(demo, "demo-01")
    cancelled, shown = cancel(
        alice, {"orderId": mine, "reason": "customer_request", "expectedVersion": 1}
    )
    too_late, shown_too_late = cancel(
        alice, {"orderId": pk_of(demo, "demo-06"), "reason": "customer_request"}
    )
    outside_constraints, shown_outside = cancel(
        alice, {"orderId": pk_of(demo, "demo-03"), "reason": "inventory_failure"}
    )
    stale, shown_stale = cancel(
        alice,
        {"orderId": pk_of(demo, "demo-03"), "reason": "customer_request", "expectedVersion": 9},
    )
    # What she lacks the capability for: refused exactly like a tool that does not exist.
    refused = {
        name: alice.call("tools/call", {"name": name, "arguments": {"orderId": ids[0]}}, id=7)
        for name in (*(f"{verb}_order" for verb in LACKED), "launch_rockets")
    }

    # Her orders tools; every registered resource's reads follow (procurement's, scoped
    # by its QUERYSET to nothing of hers).
    assert names == [
        "get_order",
        "list_orders",
        "create_order",
        "cancel_order",
        "get_purchase_request",
        "list_purchase_requests",
    ]
    assert len(orders) == 9 and {order["customer"] for order in orders.values()} == {"alice"}
    if version == MODERN:
        # She was asked once, for her own order, and said yes.
        assert len(shown) == 1 and shown[0].startswith(f"Order #{mine} (")
        assert cancelled["isError"] is False
        assert cancelled["structuredContent"]["status"] == "cancelled"
    else:
        # Her client cannot ask her: refused, nothing ran.
        assert shown == []
        assert cancelled["isError"] is True
        assert cancelled["structuredContent"]["code"] == "confirmation_required"
        assert Order.objects.get(pk=mine).status == "pending"
    # What would be refused is refused before anyone is asked.
    assert shown_too_late == shown_outside == shown_stale == []
    assert too_late["structuredContent"]["reason"] == "already_shipped"
    assert outside_constraints["structuredContent"]["code"] == "validation_error"
    assert stale["structuredContent"]["code"] == "stale_version"
    if interface == "B":
        # She does see why her own operation does not apply — and nothing else.
        assert orders[pk_of(demo, "demo-06")]["unavailableAffordances"] == [
            {
                "operation": "urn:example:operation:cancel-order:v1",
                "name": "cancel_order",
                "reason": "already_shipped",
            }
        ]
        assert "current" in too_late["structuredContent"]
    else:
        assert all("affordances" not in order for order in orders.values())
        assert "current" not in too_late["structuredContent"]
    errors = [envelope["error"] for envelope in refused.values()]
    assert all(error["code"] == -32602 for error in errors)
    assert len({json.dumps(envelope, sort_keys=True) for envelope in refused.values()}) == 1
    for error in errors:
        assert not re.search(r"confirm|ship|deliver|refund", json.dumps(error))
    assert_no_trace(alice.text())


# --- Alice on C: links and templates -------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_a_customer_following_links_sees_no_trace_of_what_she_lacks(
    demo: Demo, version: str
) -> None:
    alice = wire_for(demo, FORMS, "alice", version=version)
    start(alice)
    tools = alice.tools()
    entry_url = re.search(r"https?://\S+", tools[0]["description"])
    assert entry_url is not None

    def read(url: str) -> dict[str, Any]:
        result = alice.tool("read_resource", {"url": url})
        assert result["isError"] is False, result
        return result["structuredContent"]

    def submit(url: str, template: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return alice.tool("submit_form", {"url": url, "template": template, "arguments": arguments})

    entry = read(entry_url.group(0).rstrip("."))
    read(entry["_links"]["operations"]["href"])
    documents: dict[int, dict[str, Any]] = {}
    collection = read(entry["_links"]["orders"]["href"])
    while True:
        for item in collection["_embedded"]["orders"]:
            documents[item["id"]] = read(item["_links"]["self"]["href"])
        if "next" not in collection["_links"]:
            break
        collection = read(collection["_links"]["next"]["href"])

    pending = documents[pk_of(demo, "demo-01")]
    confirmed = documents[pk_of(demo, "demo-05")]["_links"]["self"]["href"]
    (version_field,) = [
        prop
        for prop in pending["_templates"]["cancel_order"]["properties"]
        if prop.get("type") == "hidden"
    ]
    cancelled, shown = asked(
        alice,
        "submit_form",
        {
            "url": pending["_links"]["self"]["href"],
            "template": "cancel_order",
            "arguments": {"reason": "customer_request", "expectedVersion": version_field["value"]},
        },
    )
    # Templates she lacks, on her confirmed order: refused exactly like a made-up one.
    refusals = {
        name: submit(confirmed, name, {"trackingNumber": "TRK12345678"})
        for name in (*(f"{verb}_order" for verb in LACKED), "launch_rockets")
    }

    assert [tool["name"] for tool in tools] == ["read_resource", "submit_form"]
    assert len(documents) == 9
    assert {doc["customer"] for doc in documents.values()} == {"alice"}
    for doc in documents.values():
        assert set(doc["_templates"]) <= {"cancel_order"}
    assert "create_order" in collection["_templates"]
    if version == MODERN:
        # Asked once, as on the catalog's tools (submit_form asks before its REST call).
        assert len(shown) == 1 and shown[0].startswith(f"Order #{pending['id']} (")
        assert cancelled["isError"] is False
        assert cancelled["structuredContent"]["status"] == "cancelled"
    else:
        assert shown == []
        assert cancelled["isError"] is True
        assert cancelled["structuredContent"]["code"] == "confirmation_required"
        assert Order.objects.get(pk=pending["id"]).status == "pending"
    ship = refusals["ship_order"]
    assert ship["isError"] is True
    # What she lacks reads exactly like what does not exist.
    assert ship["structuredContent"]["code"] == "not_found"
    assert all(refusal == ship for refusal in refusals.values())
    assert_no_trace(alice.text())


def test_guessing_the_url_of_an_action_she_lacks_reads_like_a_made_up_url(demo: Demo) -> None:
    """C reads any API URL: the route of an operation she lacks must not stand out."""
    alice = wire_for(demo, FORMS, "alice")
    order = f"http://testserver/api/orders/{pk_of(demo, 'demo-05')}"

    answers = {
        verb: alice.tool("read_resource", {"url": f"{order}/{verb}/"})
        for verb in ("ship", "refund", "launch")
    }

    assert answers["launch"]["structuredContent"]["code"] == "not_found"
    assert answers["ship"] == answers["launch"]
    assert answers["refund"] == answers["launch"]


# --- Bob and Alice's orders ----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("interface", ["A", "B"])
def test_anothers_order_on_the_catalog_tools_is_exactly_a_missing_one(
    demo: Demo, interface: str, version: str
) -> None:
    bob = wire_for(demo, INTERFACES[interface], "bob", version=version)
    hers, missing = pk_of(demo, "demo-05"), 999_999

    def both(name: str, arguments: dict[str, Any]) -> list[bytes]:
        return [
            anonymized(
                bob.request(
                    "tools/call", {"name": name, "arguments": {**arguments, "orderId": pk}}, id=1
                ),
                pk,
            )
            for pk in (hers, missing)
        ]

    read = both("get_order", {})
    cancel = both("cancel_order", {"reason": "customer_request"})
    resource = [
        anonymized(
            bob.request("resources/read", {"uri": f"http://testserver/api/orders/{pk}/"}, id=1),
            pk,
        )
        for pk in (hers, missing)
    ]

    assert read[0] == read[1]
    assert body_of(read[0])["result"]["structuredContent"]["code"] == "not_found"
    assert body_of(read[0])["result"]["isError"] is True
    assert cancel[0] == cancel[1]
    assert body_of(cancel[0])["result"]["structuredContent"]["code"] == "not_found"
    assert resource[0] == resource[1]
    assert "error" in body_of(resource[0])
    assert demo.order("demo-05").version == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_anothers_order_through_links_is_exactly_a_missing_one(demo: Demo, version: str) -> None:
    bob = wire_for(demo, FORMS, "bob", version=version)
    hers, missing = pk_of(demo, "demo-05"), 999_999

    def both(name: str, arguments: dict[str, Any]) -> list[bytes]:
        return [
            anonymized(
                bob.request(
                    "tools/call",
                    {
                        "name": name,
                        "arguments": {**arguments, "url": f"http://testserver/api/orders/{pk}/"},
                    },
                    id=1,
                ),
                pk,
            )
            for pk in (hers, missing)
        ]

    read = both("read_resource", {})
    cancel = both("submit_form", {"template": "cancel_order", "arguments": {}})

    assert read[0] == read[1]
    assert body_of(read[0])["result"]["structuredContent"]["code"] == "not_found"
    assert cancel[0] == cancel[1]
    assert body_of(cancel[0])["result"]["structuredContent"]["code"] == "not_found"
    assert demo.order("demo-05").version == 1
