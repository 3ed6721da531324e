"""The no-leak rule as a generated matrix: every role, every face, every operation.

docs/protocol.md#negative-affordances (and the faces: docs/protocol.md#catalog,
docs/protocol.md#affordances, docs/protocol.md#mcp, docs/protocol.md#hal-forms,
docs/protocol.md#mcp-profiles, docs/howto/admin.md): an operation whose capability
the caller lacks appears nowhere — not in the catalog, the affordances or their reasons,
the MCP tools or their errors, the HAL-FORMS templates or the admin — and refusing it
looks exactly like
refusing something that does not exist. An order the caller may not see is 404 exactly
as a missing one, on every face.

Each cell ``[role-face-operation]`` asserts, for that role on that face:

- the role has the capability (docs/demo.md#orders — written down below, never read from the
  app): where the face can show that operation, it does; where the face has a probe for
  it (an action endpoint, a ``tools/call``, a form), the probe is not refused as unknown;
- the role lacks it: the operation's name, URN and title occur in none of the bytes the
  face sent, and every probe answers byte-for-byte what the same probe answers for an
  operation (or an order) that does not exist.

What a role sees on a face is observed once per ``(role, face)`` — on the demo data of
docs/demo.md#demo-data plus two orders whose history holds every transition — and shared by that
row's cells. Each observation is self-contained (one database state, one set of ids).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import Interface
from demo_tests.conftest import Demo
from demo_tests.oracle import CREATE, CUSTOMERS, OPERATIONS, READS, ROLES, catalog_of
from demo_tests.oracle import TRANSITIONS as ORACLE_TRANSITIONS
from orders.models import Order
from tests.security.attacks import echo_free

# --- the oracle: docs/demo.md#orders as data ----------------------------------------

# Operation name → the django-fsm method, which is the action endpoint's path.
TRANSITIONS = {name: transition.segment for name, transition in ORACLE_TRANSITIONS.items()}
# Reads are everyone's; the rest is the oracle's catalog of each role.
CAPABILITIES: dict[str, frozenset[str]] = {role: frozenset(catalog_of(role)) for role in ROLES}

# docs/protocol.md#catalog: urn:{NAMESPACE}:operation:{name with _ as -}:v{N}; the demo's namespace.
NAMESPACE = "example"


def urn(name: str) -> str:
    return f"urn:{NAMESPACE}:operation:{name.replace('_', '-')}:v1"


# docs/demo.md#demo-data: on which demo order each transition applies (state, payment, total,
# delivery
# date); bob's own orders for bob, who sees no other. A probe on such an order separates
# "you may not" (refused as unknown) from "you may, but not now".
PROBE_ORDER: dict[str, dict[str, str]] = {
    "default": {
        "confirm_order": "demo-01",  # pending, authorized, 250
        "ship_order": "demo-05",  # confirmed
        "deliver_order": "demo-06",  # shipped
        "cancel_order": "demo-01",  # pending, ≤ 1000
        "refund_order": "demo-07",  # delivered 3 days ago
    },
    "bob": {
        "confirm_order": "demo-10",
        "ship_order": "demo-11",
        "deliver_order": "demo-12",
        "cancel_order": "demo-10",  # pending, 500
        "refund_order": "demo-12",
    },
}
# Arguments valid for each transition (docs/demo.md#orders), so only the probed rule can refuse.
VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    "confirm_order": {},
    "ship_order": {"trackingNumber": "TRK12345678"},
    "deliver_order": {},
    "cancel_order": {"reason": "customer_request"},
    "refund_order": {"amount": 10},
}
STALE = 999_999
UNKNOWN = "no_such_operation"
MCP = {"A": "/mcp/static", "B": "/mcp", "B-compact": "/mcp/compact", "C": "/mcp/forms"}
HAL = "application/prs.hal-forms+json"
# Ketting's default Accept, verbatim: q-values ask HAL-FORMS first.
KETTING_ACCEPT = (
    "application/prs.hal-forms+json;q=1.0, application/hal+json;q=0.9, "
    "application/vnd.api+json;q=0.8, application/vnd.siren+json;q=0.8, "
    "application/vnd.collection+json;q=0.8, application/json;q=0.7, text/html;q=0.6"
)
LEGACY = "2025-11-25"

# --- observations ---------------------------------------------------------------------

Answer = tuple[int, tuple[tuple[str, str], ...], bytes]


def answer_of(response: Any) -> Answer:
    """What a client can tell two answers apart by: status, the telling headers, body."""
    headers = tuple(
        (name, response[name])
        for name in ("Content-Type", "Allow", "Location", "WWW-Authenticate")
        if response.has_header(name)
    )
    return response.status_code, headers, response.content


@dataclass
class Seen:
    """What one role saw on one face."""

    documents: list[bytes] = field(default_factory=list)
    # Operations the face may show at all (for this role); it showed `shown`.
    can_show: frozenset[str] = frozenset()
    shown: set[str] = field(default_factory=set)
    # Per object (order), the operations shown on it — each capable one on every object.
    per_object: dict[str, frozenset[str]] | None = None
    per_object_ops: frozenset[str] = frozenset()
    # operation → (its probe's answer, the same probe's answer for something that does
    # not exist). `probe_shows`: a capable role's probe must differ from the reference.
    probes: dict[str, list[tuple[Answer, Answer]]] = field(default_factory=dict)
    probe_shows: frozenset[str] = frozenset()
    # Facts about the whole face that every cell of the row re-asserts.
    facts: list[tuple[str, bool]] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    urns: dict[str, str] = field(default_factory=dict)

    def add(self, response: Any) -> Any:
        self.documents.append(response.content)
        return response


class Observer:
    """Drives one face as one role, on a fresh copy of the demo data."""

    def __init__(self, demo: Demo, role: str) -> None:
        self.demo = demo
        self.role = role
        self.user = demo.users[role]
        self.token = str(AccessToken.for_user(self.user))
        self.api = APIClient()
        self.api.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")
        self.browser = Client()
        self.browser.force_login(self.user)
        self.history = _orders_with_history(demo)
        visible = [o for o in Order.objects.order_by("pk") if self._sees(o)]
        self.visible = [order.pk for order in visible]
        self.missing = Order.objects.order_by("-pk").first().pk + 10_000

    def _sees(self, order: Order) -> bool:
        # docs/demo.md#orders: customers see their own orders only, every other role sees all.
        return self.role not in CUSTOMERS or order.customer.username == self.role

    def probe_pk(self, operation: str) -> int:
        """The order to probe ``operation`` on: one this role sees (docs/demo.md#orders,
        docs/demo.md#demo-data)."""
        table = PROBE_ORDER["bob" if self.role == "bob" else "default"]
        pk = self.demo.orders[table[operation]].pk
        assert pk in self.visible
        return pk

    # -- the wire --------------------------------------------------------------------

    def get(self, path: str, **headers: str) -> Any:
        return self.api.get(path, headers=headers)

    def post(self, path: str, body: Any, **headers: str) -> Any:
        return self.api.post(
            path, data=json.dumps(body), content_type="application/json", headers=headers
        )

    def mcp(self, interface: str, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
        if params is not None:
            message["params"] = params
        return Client().post(
            MCP[interface],
            data=json.dumps(message),
            content_type="application/json",
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": LEGACY,
            },
        )

    def call(self, interface: str, tool: str, arguments: dict[str, Any]) -> Any:
        return self.mcp(interface, "tools/call", {"name": tool, "arguments": arguments})


def _orders_with_history(demo: Demo) -> dict[str, int]:
    """Two more orders of alice's whose audit history holds every transition (admin ran
    them), so history tables have something to hide."""
    admin = demo.users["admin"]
    alice = demo.users["alice"]
    refunded, cancelled = (
        Order.objects.create(
            customer=alice, description=f"History: {what}", total=total, payment_status="authorized"
        )
        for what, total in (("refunded", Decimal("30.00")), ("cancelled", Decimal("20.00")))
    )
    catalog = get_catalog()
    runs = [
        (refunded, "confirm_order", {}),
        (refunded, "ship_order", {"trackingNumber": "TRK99999999"}),
        (refunded, "deliver_order", {}),
        (refunded, "refund_order", {"amount": "5.00", "note": "history"}),
        (cancelled, "cancel_order", {"reason": "inventory_failure", "note": "history"}),
    ]
    for order, name, arguments in runs:
        perform(
            operation=catalog.lookup(name),
            pk=order.pk,
            user=admin,
            arguments=arguments,
            via=Interface.ADMIN,
            represent=lambda instance: {"id": instance.pk},
        )
    return {"refunded": refunded.pk, "cancelled": cancelled.pk}


def _names(entries: Any) -> set[str]:
    return {entry["name"] for entry in entries or []}


def _listed(representation: dict[str, Any]) -> frozenset[str]:
    return frozenset(
        _names(representation.get("affordances"))
        | _names(representation.get("unavailableAffordances"))
    )


def _templates(document: Any) -> set[str]:
    """Every `_templates` key of a HAL-FORMS document and of its embedded documents."""
    if not isinstance(document, dict):
        return set()
    found = set(document.get("_templates") or {})
    for items in (document.get("_embedded") or {}).values():
        for item in items:
            found |= _templates(item)
    return found


# --- the faces ------------------------------------------------------------------------


def observe_catalog_list(o: Observer, seen: Seen) -> None:
    response = seen.add(o.get("/api/operations/"))
    seen.facts.append(("the catalog answers 200", response.status_code == 200))
    seen.can_show = frozenset(OPERATIONS)
    seen.shown = _names(response.json()["operations"])


def observe_catalog_detail(o: Observer, seen: Seen) -> None:
    seen.can_show = seen.probe_shows = frozenset(OPERATIONS)
    by_name = answer_of(seen.add(o.get(f"/api/operations/{UNKNOWN}/")))
    by_urn = answer_of(seen.add(o.get(f"/api/operations/{urn(UNKNOWN)}/")))
    seen.facts.append(("an unknown operation is 404", by_name[0] == by_urn[0] == 404))
    for name in OPERATIONS:
        named = seen.add(o.get(f"/api/operations/{name}/"))
        identified = seen.add(o.get(f"/api/operations/{seen.urns[name]}/"))
        if named.status_code == 200 and named.json().get("name") == name:
            seen.shown.add(name)
        seen.probes[name] = [(answer_of(named), by_name), (answer_of(identified), by_urn)]


def observe_order_list(o: Observer, seen: Seen, query: str = "") -> None:
    response = seen.add(o.get(f"/api/orders/{query}"))
    results = response.json()["results"]
    seen.facts.append(
        ("the list holds exactly the visible orders", [r["id"] for r in results] == o.visible)
    )
    seen.can_show = frozenset({"list_orders", *TRANSITIONS})
    seen.per_object = {str(r["id"]): _listed(r) for r in results}
    seen.per_object_ops = frozenset(TRANSITIONS)
    seen.shown = set().union(*seen.per_object.values())
    if response.status_code == 200:
        seen.shown.add("list_orders")


def observe_order_detail(o: Observer, seen: Seen) -> None:
    seen.can_show = frozenset({"get_order", *TRANSITIONS})
    seen.per_object = {}
    seen.per_object_ops = frozenset(TRANSITIONS)
    for pk in o.visible:
        response = seen.add(o.get(f"/api/orders/{pk}/"))
        seen.facts.append((f"order {pk} answers 200", response.status_code == 200))
        seen.per_object[str(pk)] = _listed(response.json())
        if response.status_code == 200:
            seen.shown.add("get_order")
    seen.shown |= set().union(*seen.per_object.values())


def observe_unavailable(o: Observer, seen: Seen) -> None:
    seen.can_show = frozenset(TRANSITIONS)
    for pk in o.visible:
        unavailable = o.get(f"/api/orders/{pk}/").json()["unavailableAffordances"]
        seen.documents.append(json.dumps(unavailable).encode())
        seen.shown |= _names(unavailable)
        seen.facts.append(
            (f"order {pk}: every reason is a machine code", all(u["reason"] for u in unavailable))
        )


def observe_action_endpoints(o: Observer, seen: Seen) -> None:
    seen.can_show = seen.probe_shows = frozenset({*READS, CREATE, *TRANSITIONS})
    headers = {"If-Match": f'"{STALE}"'}
    for name, method in TRANSITIONS.items():
        # A stale If-Match: after the 404 check a capable caller is refused with 412, so
        # nothing runs whoever asks.
        pk = o.probe_pk(name)
        body = VALID_ARGUMENTS[name]
        asked = seen.add(o.post(f"/api/orders/{pk}/{method}/", body, **headers))
        missing = seen.add(o.post(f"/api/orders/{o.missing}/{method}/", body, **headers))
        seen.probes[name] = [(answer_of(asked), answer_of(missing))]
        if asked.status_code == 412:
            seen.shown.add(name)
    # The collection takes POST only from who may create; otherwise it answers as a
    # read-only collection (the catalog) does.
    created = seen.add(o.post("/api/orders/", {}))
    read_only = seen.add(o.post("/api/operations/", {}))
    seen.probes[CREATE] = [(answer_of(created), answer_of(read_only))]
    if created.status_code == 400:
        seen.shown.add(CREATE)
    for name, path in (
        ("get_order", f"/api/orders/{o.visible[0]}/"),
        ("list_orders", "/api/orders/"),
    ):
        response = seen.add(o.get(path))
        seen.probes[name] = [(answer_of(response), answer_of(o.get(f"/api/orders/{o.missing}/")))]
        if response.status_code == 200:
            seen.shown.add(name)


def _probe_tools(o: Observer, seen: Seen, interface: str) -> None:
    for name in OPERATIONS:
        if name in TRANSITIONS:
            arguments = {
                "orderId": o.probe_pk(name),
                "expectedVersion": STALE,
                **VALID_ARGUMENTS[name],
            }
        elif name == "get_order":
            arguments = {"orderId": o.visible[0]}
        else:
            arguments = {}
        asked = seen.add(o.call(interface, name, arguments))
        unknown = seen.add(o.call(interface, UNKNOWN, arguments))
        seen.probes[name] = [(answer_of(asked), answer_of(unknown))]


def observe_mcp_catalog(interface: str) -> Callable[[Observer, Seen], None]:
    def observe(o: Observer, seen: Seen) -> None:
        response = seen.add(o.mcp(interface, "tools/list"))
        tools = response.json()["result"]["tools"]
        seen.can_show = seen.probe_shows = frozenset(OPERATIONS)
        seen.shown = _names(tools)
        seen.facts.append(
            (
                "each tool names its operation's URN",
                all(t["_meta"]["affordances/operation"] == seen.urns[t["name"]] for t in tools),
            )
        )
        _probe_tools(o, seen, interface)

    return observe


def observe_mcp_forms(o: Observer, seen: Seen) -> None:
    listing = seen.add(o.mcp("C", "tools/list"))
    seen.facts.append(
        (
            "C offers its two generic tools",
            _names(listing.json()["result"]["tools"]) == {"read_resource", "submit_form"},
        )
    )
    seen.can_show = frozenset(OPERATIONS)
    seen.probe_shows = frozenset({CREATE, *TRANSITIONS})

    def read(url: str) -> dict[str, Any]:
        result = seen.add(o.call("C", "read_resource", {"url": url})).json()["result"]
        return result

    entry = read("http://testserver/api/")
    seen.facts.append(("the entry point reads", entry["isError"] is False))
    collection = read("http://testserver/api/orders/")
    if collection["isError"] is False:
        seen.shown.add("list_orders")
    seen.shown |= _templates(collection["structuredContent"])
    for pk in o.visible:
        item = read(f"http://testserver/api/orders/{pk}/")
        if item["isError"] is False:
            seen.shown.add("get_order")
        seen.shown |= _templates(item["structuredContent"])
    # submit_form of a template the resource does not offer reads the same whether the
    # operation is unknown, not yours or not available; a capable caller with a stale
    # version gets stale_version instead.
    for name in TRANSITIONS:
        url = f"http://testserver/api/orders/{o.probe_pk(name)}/"
        values = {**VALID_ARGUMENTS[name], "expectedVersion": str(STALE)}
        asked = seen.add(
            o.call("C", "submit_form", {"url": url, "template": name, "arguments": values})
        )
        unknown = seen.add(
            o.call("C", "submit_form", {"url": url, "template": UNKNOWN, "arguments": values})
        )
        seen.probes[name] = [(answer_of(asked), answer_of(unknown))]
    url = "http://testserver/api/orders/"
    asked = seen.add(o.call("C", "submit_form", {"url": url, "template": CREATE, "arguments": {}}))
    unknown = seen.add(
        o.call("C", "submit_form", {"url": url, "template": UNKNOWN, "arguments": {}})
    )
    seen.probes[CREATE] = [(answer_of(asked), answer_of(unknown))]


def observe_hal_item(o: Observer, seen: Seen) -> None:
    seen.can_show = frozenset({"get_order", *TRANSITIONS})
    for pk in o.visible:
        response = seen.add(o.get(f"/api/orders/{pk}/", Accept=HAL))
        seen.facts.append((f"order {pk} is HAL-FORMS", response["Content-Type"].startswith(HAL)))
        if response.status_code == 200:
            seen.shown.add("get_order")
        seen.shown |= _templates(response.json())


def observe_hal_collection(o: Observer, seen: Seen) -> None:
    seen.can_show = frozenset({"list_orders", CREATE, *TRANSITIONS})
    entry = seen.add(o.get("/api/", Accept=HAL))
    seen.facts.append(("the entry point is HAL-FORMS", entry["Content-Type"].startswith(HAL)))
    response = seen.add(o.get("/api/orders/", Accept=HAL))
    if response.status_code == 200:
        seen.shown.add("list_orders")
    seen.shown |= _templates(response.json())


ADMIN = "/admin/orders/order/"


def _customer_is_sent_to_login(o: Observer, seen: Seen, paths: list[str]) -> None:
    for path in paths:
        response = seen.add(o.browser.get(path))
        seen.facts.append(
            (
                f"{path} sends a customer to the login page",
                response.status_code == 302 and response["Location"].startswith("/admin/login/"),
            )
        )


def observe_admin_changelist(o: Observer, seen: Seen) -> None:
    if o.role in CUSTOMERS:
        _customer_is_sent_to_login(o, seen, [ADMIN])
        return
    seen.can_show = frozenset({"list_orders", CREATE, *TRANSITIONS})
    response = seen.add(o.browser.get(ADMIN))
    body = response.content.decode()
    if response.status_code == 200:
        seen.shown.add("list_orders")
    # Bulk actions, one per transition the user may run; the add button for creation.
    seen.shown |= {name for name in TRANSITIONS if f'value="operation_{name}"' in body}
    if f'href="{ADMIN}add/"' in body:
        seen.shown.add(CREATE)


def observe_admin_change(o: Observer, seen: Seen) -> None:
    paths = [f"{ADMIN}{pk}/change/" for pk in o.visible]
    if o.role in CUSTOMERS:
        _customer_is_sent_to_login(o, seen, paths)
        return
    seen.can_show = frozenset({"get_order", *TRANSITIONS})
    seen.per_object = {}
    seen.per_object_ops = frozenset(TRANSITIONS)
    for pk, path in zip(o.visible, paths, strict=True):
        response = seen.add(o.browser.get(path))
        body = response.content.decode()
        seen.facts.append((f"{path} answers 200", response.status_code == 200))
        seen.per_object[str(pk)] = frozenset(
            name for name in TRANSITIONS if f'data-operation="{name}"' in body
        )
        if response.status_code == 200:
            seen.shown.add("get_order")
    for pk in o.history.values():
        seen.facts.append(
            (
                f"order {pk}'s history is listed",
                b"audit-record" in seen.documents[o.visible.index(pk)],
            )
        )
    seen.shown |= set().union(*seen.per_object.values())


def observe_admin_operation_form(o: Observer, seen: Seen) -> None:
    if o.role in CUSTOMERS:
        pk = o.visible[0]
        _customer_is_sent_to_login(
            o, seen, [f"{ADMIN}{pk}/operation/{name}/" for name in TRANSITIONS] + [f"{ADMIN}add/"]
        )
        return
    seen.can_show = seen.probe_shows = frozenset({*READS, CREATE, *TRANSITIONS})
    for name in TRANSITIONS:
        pk = o.probe_pk(name)
        asked = seen.add(o.browser.get(f"{ADMIN}{pk}/operation/{name}/"))
        unknown = seen.add(o.browser.get(f"{ADMIN}{pk}/operation/{UNKNOWN}/"))
        missing = seen.add(o.browser.get(f"{ADMIN}{o.missing}/operation/{name}/"))
        seen.probes[name] = [(answer_of(asked), answer_of(unknown))]
        seen.facts.append(
            (
                f"{name} on a missing order is refused as an unknown operation",
                answer_of(missing) == answer_of(unknown),
            )
        )
        if asked.status_code == 200 and f'data-operation="{name}"' in asked.content.decode():
            seen.shown.add(name)
    # Creation is the add page; without the capability it is refused as the add page of
    # a model the user may not add to is.
    added = seen.add(o.browser.get(f"{ADMIN}add/"))
    other = seen.add(o.browser.get("/admin/auth/group/add/"))
    seen.probes[CREATE] = [(answer_of(added), answer_of(other))]
    if added.status_code == 200:
        seen.shown.add(CREATE)
    for name, path in (("get_order", f"{ADMIN}{o.visible[0]}/change/"), ("list_orders", ADMIN)):
        response = seen.add(o.browser.get(path))
        seen.probes[name] = [
            (answer_of(response), answer_of(o.browser.get(f"{ADMIN}{o.missing}/change/")))
        ]
        if response.status_code == 200:
            seen.shown.add(name)


def observe_admin_catalog(o: Observer, seen: Seen) -> None:
    if o.role in CUSTOMERS:
        _customer_is_sent_to_login(o, seen, [f"{ADMIN}catalog/"])
        return
    seen.can_show = frozenset(OPERATIONS)
    response = seen.add(o.browser.get(f"{ADMIN}catalog/"))
    body = response.content.decode()
    seen.shown = {name for name in OPERATIONS if f'id="operation-{name}"' in body}


# Every Accept value the project renders, and what a browser or a caching client sends.
ACCEPTS = (
    "application/json",
    HAL,
    "application/hal+json",
    KETTING_ACCEPT,
    "text/html",
    "application/problem+json",
    "application/xml",
    "*/*",
)


def wire_of(response: Any) -> Answer:
    """Status, every header, body: nothing a client could tell two answers apart by."""
    return response.status_code, tuple(sorted(response.headers.items())), response.content


def observe_browsable(o: Observer, seen: Seen) -> None:
    """The browsable API as a logged-in browser sees it: list, details, action routes."""
    seen.can_show = frozenset({"list_orders", "get_order", *TRANSITIONS})
    seen.probe_shows = frozenset(TRANSITIONS)
    seen.per_object = {}
    seen.per_object_ops = frozenset(TRANSITIONS)
    listing = seen.add(o.browser.get("/api/orders/?format=api"))
    seen.facts.append(("the browsable list answers 200", listing.status_code == 200))
    if listing.status_code == 200 and b"<html" in listing.content:
        seen.shown.add("list_orders")
    for pk in o.visible:
        page = seen.add(o.browser.get(f"/api/orders/{pk}/", HTTP_ACCEPT="text/html"))
        seen.facts.append((f"order {pk}'s page answers 200", page.status_code == 200))
        if page.status_code == 200:
            seen.shown.add("get_order")
        text = page.content.decode()
        seen.per_object[str(pk)] = frozenset(name for name in TRANSITIONS if name in text)
    seen.shown |= set().union(*seen.per_object.values())
    for name, verb in TRANSITIONS.items():
        pk = o.probe_pk(name)
        asked = seen.add(o.browser.get(f"/api/orders/{pk}/{verb}/?format=api"))
        made_up = seen.add(o.browser.get(f"/api/orders/{pk}/{verb}x/?format=api"))
        seen.probes[name] = [(wire_of(asked), wire_of(made_up))]
        if asked.status_code == 405:
            seen.shown.add(name)


def observe_accept_and_options(o: Observer, seen: Seen) -> None:
    """Each action route under every Accept, and OPTIONS, against a made-up route."""
    seen.can_show = seen.probe_shows = frozenset(TRANSITIONS)
    for name, verb in TRANSITIONS.items():
        pk = o.probe_pk(name)
        route, made_up = f"/api/orders/{pk}/{verb}/", f"/api/orders/{pk}/{verb}x/"
        probes = []
        for accept in ACCEPTS:
            body = VALID_ARGUMENTS[name]
            headers = {"Accept": accept, "If-Match": f'"{STALE}"'}
            asked = seen.add(o.post(route, body, **headers))
            probes.append((wire_of(asked), wire_of(o.post(made_up, body, **headers))))
            seen.facts.append((f"{verb} under {accept} is no 500", asked.status_code < 500))
        options = seen.add(o.api.options(route))
        probes.append((wire_of(options), wire_of(o.api.options(made_up))))
        seen.probes[name] = probes
        # A capable caller's stale If-Match is refused with 412 under any Accept it can
        # be answered in.
        if any(asked[0] == 412 for asked, _ in probes):
            seen.shown.add(name)
    detail = seen.add(o.api.options(f"/api/orders/{o.visible[0]}/"))
    seen.facts.append(("OPTIONS on an order answers 200", detail.status_code == 200))


FACES: dict[str, Callable[[Observer, Seen], None]] = {
    "catalog-list": observe_catalog_list,
    "catalog-detail": observe_catalog_detail,
    "order-list": observe_order_list,
    "order-list-compact": lambda o, seen: observe_order_list(o, seen, "?affordances=compact"),
    "order-detail": observe_order_detail,
    "unavailable-affordances": observe_unavailable,
    "action-endpoints": observe_action_endpoints,
    "mcp-A-static": observe_mcp_catalog("A"),
    "mcp-B-hybrid": observe_mcp_catalog("B"),
    "mcp-B-compact": observe_mcp_catalog("B-compact"),
    "mcp-C-forms": observe_mcp_forms,
    "hal-item": observe_hal_item,
    "hal-collection": observe_hal_collection,
    "admin-changelist": observe_admin_changelist,
    "admin-change": observe_admin_change,
    "admin-operation-form": observe_admin_operation_form,
    "admin-catalog": observe_admin_catalog,
    "browsable-api": observe_browsable,
    "accept-and-options": observe_accept_and_options,
}

_SEEN: dict[tuple[str, str], Seen] = {}


@pytest.fixture
def observe(request: pytest.FixtureRequest) -> Callable[[str, str], Seen]:
    """``observe(role, face)``: what that role saw on that face, observed once per row."""

    def get(role: str, face: str) -> Seen:
        if (role, face) not in _SEEN:
            demo: Demo = request.getfixturevalue("demo")
            observer = Observer(demo, role)
            admin_catalog = APIClient()
            admin_catalog.force_authenticate(get_user_model().objects.get(username="admin"))
            entries = admin_catalog.get("/api/operations/").json()["operations"]
            seen = Seen(
                titles={entry["name"]: entry["title"] for entry in entries},
                urns={entry["name"]: entry["id"] for entry in entries},
            )
            FACES[face](observer, seen)
            _SEEN[role, face] = seen
        return _SEEN[role, face]

    return get


# --- the matrix ---------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("role", ROLES)
def test_an_operation_shows_exactly_where_the_role_has_its_capability(
    observe: Callable[[str, str], Seen], role: str, face: str, operation: str
) -> None:
    seen = observe(role, face)
    for fact, holds in seen.facts:
        assert holds, fact
    capable = operation in CAPABILITIES[role]

    # Every cell asserts both ways: shown exactly where the face can show it and the role
    # has the capability; listed on every object or on none; each probe refused as
    # unknown exactly when the role lacks the capability.
    shows = operation in seen.can_show and capable
    assert (operation in seen.shown) == shows, f"{face}: {operation} shown to {role}: {not shows}"
    if seen.per_object is not None and operation in seen.per_object_ops:
        listing = sorted(pk for pk, shown in seen.per_object.items() if (operation in shown))
        expected = sorted(seen.per_object) if capable else []
        assert listing == expected, f"{face}: orders listing {operation} for {role}"
    probes = seen.probes.get(operation, [])
    assert bool(probes) == (operation in seen.probe_shows), f"{face} probes {operation}"
    for asked, reference in probes:
        assert (asked != reference) == capable, f"{face}: {operation} probed as {role}"
    if not capable:
        needles = (operation, seen.urns[operation], seen.titles[operation])
        leaked = {n for n in needles for body in seen.documents if n.encode() in body}
        assert not leaked, f"{face} leaks {sorted(leaked)} to {role}"


def test_the_matrix_covers_the_whole_catalog(api: Callable[[str], APIClient]) -> None:
    # The oracle names every operation the superuser's catalog has, with docs/protocol.md#catalog's
    # URNs.
    # (Purchase requests have their matrix in tests/test_procurement_leak_matrix.py.)
    entries = api("admin").get("/api/operations/").json()["operations"]
    entries = [entry for entry in entries if entry["resource"] == "order"]
    assert sorted(entry["name"] for entry in entries) == sorted(OPERATIONS)
    assert {entry["name"]: entry["id"] for entry in entries} == {
        name: urn(name) for name in OPERATIONS
    }


# --- the OpenAPI document -------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("role", "operation"),
    [(role, name) for role in ROLES for name in TRANSITIONS if name not in CAPABILITIES[role]],
)
def test_the_openapi_document_names_no_operation_the_role_lacks(
    demo: Demo, role: str, operation: str
) -> None:
    # docs/protocol.md#affordances: an operation the caller lacks the capability for appears
    # "nowhere else"
    # either; GET /api/schema/ (and the Swagger UI on it) is served to every caller.
    o = Observer(demo, role)
    response = o.get("/api/schema/", Accept="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    title = get_catalog().lookup(operation).title
    named = [
        needle
        for needle in (operation, urn(operation), title)
        if needle.encode() in response.content
    ]
    assert not named, f"/api/schema/ names {named} to {role}"


# --- another customer's order ---------------------------------------------------------

OTHERS = {"alice": ("bob", "demo-10"), "bob": ("alice", "demo-01")}


def _foreign_faces() -> list[str]:
    faces = [
        "rest-detail",
        "hal-detail",
        "mcp-A-get_order",
        "mcp-B-get_order",
        "mcp-C-read_resource",
    ]
    for name in TRANSITIONS:
        faces += [f"rest-{name}", f"mcp-A-{name}", f"mcp-B-{name}", f"mcp-C-submit_form-{name}"]
    return [*faces, "admin-change"]


def _ask(o: Observer, face: str, pk: int) -> Answer:
    url = f"http://testserver/api/orders/{pk}/"
    kind, _, name = face.partition("-")
    if face == "rest-detail":
        return answer_of(o.get(f"/api/orders/{pk}/"))
    if face == "hal-detail":
        return answer_of(o.get(f"/api/orders/{pk}/", Accept=HAL))
    if face == "admin-change":
        response = o.browser.get(f"{ADMIN}{pk}/change/")
        # Customers are not staff: both are a redirect to the login page, which names
        # the requested path — the only difference, and one the client itself made.
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
        return response.status_code, (), response.content
    if kind == "rest":
        body = VALID_ARGUMENTS[name]
        return answer_of(o.post(f"/api/orders/{pk}/{TRANSITIONS[name]}/", body))
    interface, _, tool = name.partition("-")
    if tool == "read_resource":
        return answer_of(o.call("C", "read_resource", {"url": url}))
    if tool.startswith("submit_form-"):
        template = tool.removeprefix("submit_form-")
        values = {**VALID_ARGUMENTS[template], "expectedVersion": "1"}
        return answer_of(
            o.call("C", "submit_form", {"url": url, "template": template, "arguments": values})
        )
    arguments = {"orderId": pk, **VALID_ARGUMENTS.get(tool, {})}
    return answer_of(o.call(interface, tool, arguments))


@pytest.mark.django_db
@pytest.mark.parametrize("face", _foreign_faces())
@pytest.mark.parametrize("customer", CUSTOMERS)
def test_another_customers_order_is_indistinguishable_from_a_missing_one(
    demo: Demo, customer: str, face: str
) -> None:
    o = Observer(demo, customer)
    owner, key = OTHERS[customer]
    foreign = demo.orders[key]
    assert foreign.customer.username == owner and foreign.pk not in o.visible
    before = (Order.objects.get(pk=foreign.pk).version, Order.objects.count())

    asked, missing = _ask(o, face, foreign.pk), _ask(o, face, o.missing)

    assert asked == missing
    assert asked[0] in (200, 302, 404), asked  # MCP answers 200 with a not_found result
    if face.startswith("mcp-"):
        # Either the tool is not the customer's (-32602, as unknown) or it is not_found.
        result = json.loads(asked[2]).get("result")
        if result is not None:
            assert result["isError"] is True
            assert result["structuredContent"]["code"] == "not_found"
    assert (Order.objects.get(pk=foreign.pk).version, Order.objects.count()) == before


# --- anonymous callers ----------------------------------------------------------------


def _anonymous_probes(operation: str, pk: int) -> list[tuple[str, dict[str, Any], str]]:
    """(method, request, the same request naming something that does not exist)."""
    probes: list[tuple[str, dict[str, Any], str]] = [
        ("GET", {}, f"/api/operations/{operation}/"),
        ("GET", {"HTTP_ACCEPT": HAL}, f"/api/operations/{urn(operation)}/"),
    ]
    if operation in TRANSITIONS:
        route = f"/api/orders/{pk}/{TRANSITIONS[operation]}/"
        for accept in ACCEPTS:
            for method in ("GET", "POST", "OPTIONS"):
                probes.append((method, {"HTTP_ACCEPT": accept}, route))
            probes.append(("GET", {"HTTP_ACCEPT": accept}, route + "?format=api"))
    return probes


@pytest.mark.django_db
@pytest.mark.parametrize("operation", OPERATIONS)
def test_an_anonymous_caller_learns_nothing_of_any_operation(demo: Demo, operation: str) -> None:
    pk = demo.orders["demo-01"].pk
    client = Client()
    made_up = operation.replace("_", "x")
    for method, headers, path in _anonymous_probes(operation, pk):
        asked = client.generic(method, path, **headers)
        name = TRANSITIONS.get(operation, operation)
        other = path.replace(name, made_up)
        reference = client.generic(method, other, **headers)
        assert echo_free(wire_of(asked), path) == echo_free(wire_of(reference), other), (
            method,
            path,
            headers,
        )
        assert asked.status_code == 401
        assert operation.encode() not in asked.content
    for endpoint in MCP.values():
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        answers = [
            Client().post(
                endpoint,
                data=json.dumps({**message, "params": {"name": name, "arguments": {}}}),
                content_type="application/json",
                headers={"Accept": "application/json", "MCP-Protocol-Version": LEGACY},
            )
            for name in (operation, UNKNOWN)
        ]
        assert wire_of(answers[0]) == wire_of(answers[1])
        assert answers[0].status_code == 401
