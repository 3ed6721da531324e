"""The no-leak rule for purchase requests: every role, every face, every operation.

As ``tests/test_leak_matrix.py`` does for orders: an operation whose capability the
caller lacks — paying, for an auditor or a requester — appears in none of the bytes a
face sends (its name, URN and title), and probing it answers byte for byte what probing
an operation that does not exist answers. A capability the role holds is shown where
the face can show it, and its probe is not refused as unknown.

The capabilities below are written down from the roles' definition (README), never read
from the app.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from demo_tests.conftest import ProcurementDemo
from demo_tests.test_leak_matrix import HAL, LEGACY, Answer, answer_of
from procurement.models import PurchaseRequest

READS = ("get_purchase_request", "list_purchase_requests")
REQUESTING = ("create", "submit", "attach_quote", "withdraw")
APPROVING = ("approve", "reject", "request_changes")
BUYING = ("order", "cancel", "expedite", "insure")
RECEIVING = ("receive", "file_claim", "recall")
PAYING = ("invoice", "dispute_invoice", "pay")
ALL = (*REQUESTING, *APPROVING, *BUYING, *RECEIVING, *PAYING)


def _ops(*verbs: str) -> frozenset[str]:
    return frozenset(f"{verb}_purchase_request" for verb in verbs)


OPERATIONS = frozenset(READS) | _ops(*ALL)
CAPABILITIES: dict[str, frozenset[str]] = {
    "admin": OPERATIONS,
    "rita": frozenset(READS) | _ops(*REQUESTING),
    "remy": frozenset(READS) | _ops(*REQUESTING),
    "approver": frozenset(READS) | _ops(*REQUESTING, *APPROVING),
    "senior_approver": frozenset(READS) | _ops(*REQUESTING, *APPROVING),
    "buyer": frozenset(READS) | _ops(*BUYING),
    "receiving_clerk": frozenset(READS) | _ops(*RECEIVING),
    "accounts_payable": frozenset(READS) | _ops(*PAYING),
    "auditor": frozenset(READS),
    # Orders' roles: the reads of every registered resource, nothing else.
    "alice": frozenset(READS),
    "support": frozenset(READS),
}
STAFF = {"admin", "approver", "senior_approver", "buyer", "receiving_clerk",
         "accounts_payable", "auditor", "support"}  # fmt: skip
MCP = {"A": "/mcp/static", "B": "/mcp", "C": "/mcp/forms"}


@dataclass
class Seen:
    documents: list[bytes] = field(default_factory=list)
    can_show: frozenset[str] = frozenset()
    shown: set[str] = field(default_factory=set)
    probes: dict[str, tuple[Answer, Answer]] = field(default_factory=dict)

    def add(self, response: Any) -> Any:
        self.documents.append(response.content)
        return response


class Observer:
    def __init__(self, procurement: ProcurementDemo, role: str) -> None:
        from django.contrib.auth import get_user_model

        self.role = role
        user = get_user_model().objects.get(username=role)
        self.token = str(AccessToken.for_user(user))
        self.api = APIClient()
        self.api.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")
        self.browser = Client()
        self.browser.force_login(user)
        response = self.api.get("/api/purchase-requests/?page_size=200")
        self.visible = [r["id"] for r in response.json()["results"]]
        # A request to probe each operation on: one of the role's own if it has any.
        self.probe_pk = self.visible[0] if self.visible else PurchaseRequest.objects.first().pk

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


def _names(entries: Any) -> set[str]:
    return {entry["name"] for entry in entries or []}


def observe_catalog(o: Observer, seen: Seen) -> None:
    seen.can_show = OPERATIONS
    seen.shown = _names(seen.add(o.api.get("/api/operations/")).json()["operations"])
    seen.add(o.api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"))


def observe_rest(o: Observer, seen: Seen) -> None:
    seen.can_show = _ops(*ALL) - _ops("create")
    for pk in o.visible:
        body = seen.add(o.api.get(f"/api/purchase-requests/{pk}/")).json()
        seen.shown |= _names(body["affordances"]) | _names(body["unavailableAffordances"])
    seen.add(o.api.get("/api/purchase-requests/?page_size=200"))
    for operation in _ops(*ALL) - _ops("create"):
        verb = operation.removesuffix("_purchase_request")
        url = f"/api/purchase-requests/{o.probe_pk}/"
        asked = o.api.post(f"{url}{verb}/", {}, format="json")
        reference = o.api.post(f"{url}no_such_operation/", {}, format="json")
        seen.probes[operation] = (answer_of(asked), answer_of(reference))
        seen.add(asked)


def observe_hal(o: Observer, seen: Seen) -> None:
    seen.add(o.api.get("/api/purchase-requests/?page_size=200", HTTP_ACCEPT=HAL))
    for pk in o.visible:
        seen.add(o.api.get(f"/api/purchase-requests/{pk}/", HTTP_ACCEPT=HAL))
    seen.add(o.api.get("/api/", HTTP_ACCEPT=HAL))


def observe_mcp(interface: str) -> Callable[[Observer, Seen], None]:
    def observe(o: Observer, seen: Seen) -> None:
        seen.can_show = OPERATIONS
        tools = seen.add(o.mcp(interface, "tools/list")).json()["result"]["tools"]
        seen.shown = _names(tools)
        for operation in OPERATIONS:
            asked = o.mcp(interface, "tools/call", {"name": operation, "arguments": {
                "purchaseRequestId": o.probe_pk}})  # fmt: skip
            reference = o.mcp(interface, "tools/call", {"name": "no_such_tool", "arguments": {
                "purchaseRequestId": o.probe_pk}})  # fmt: skip
            # The echoed name is the probe's own: compare with it swapped in.
            swapped = reference.content.replace(b"no_such_tool", operation.encode())
            seen.probes[operation] = (
                (asked.status_code, (), asked.content),
                (reference.status_code, (), swapped),
            )

    return observe


def observe_mcp_forms(o: Observer, seen: Seen) -> None:
    seen.add(o.mcp("C", "tools/list"))
    for pk in o.visible:
        uri = f"http://testserver/api/purchase-requests/{pk}/"
        seen.add(o.mcp("C", "tools/call", {"name": "read_resource", "arguments": {"url": uri}}))


def observe_admin(o: Observer, seen: Seen) -> None:
    if o.role not in STAFF:
        return
    seen.add(o.browser.get("/admin/procurement/purchaserequest/"))
    for pk in o.visible[:10]:
        seen.add(o.browser.get(f"/admin/procurement/purchaserequest/{pk}/change/"))


FACES = {
    "catalog": observe_catalog,
    "rest": observe_rest,
    "hal-forms": observe_hal,
    "mcp-A": observe_mcp("A"),
    "mcp-B": observe_mcp("B"),
    "mcp-C": observe_mcp_forms,
    "admin": observe_admin,
}


@pytest.mark.parametrize("face", list(FACES))
@pytest.mark.parametrize("role", list(CAPABILITIES))
def test_procurement_leak_matrix(procurement: ProcurementDemo, role: str, face: str) -> None:
    o = Observer(procurement, role)
    seen = Seen()
    FACES[face](o, seen)
    catalog = get_catalog()
    capable = CAPABILITIES[role]
    for operation in sorted(OPERATIONS):
        entry = catalog.lookup(operation)
        assert entry is not None, operation
        if operation in capable:
            if operation in seen.can_show:
                assert operation in seen.shown, f"{face}: {role} is not shown {operation}"
            if operation in seen.probes:
                asked, reference = seen.probes[operation]
                assert asked != reference, f"{face}: {role}'s {operation} refused as unknown"
            continue
        needles = (operation, entry.urn, entry.title)
        leaked = {n for n in needles for body in seen.documents if n.encode() in body}
        assert not leaked, f"{face} leaks {sorted(leaked)} to {role}"
        if operation in seen.probes:
            asked, reference = seen.probes[operation]
            assert asked == reference, f"{face}: {operation} probed as {role} differs"
