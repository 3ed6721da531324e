"""Procurement over MCP, driven by the official SDK client against a live server.

The same registration serves the tools: each role lists exactly its catalog, a policy
refusal is a result with the same machine reason as REST, and a role without the
payment capability finds no trace of it.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import ProcurementDemo
from demo_tests.test_mcp_sdk import MODES, Server, body_of, problem_of
from procurement.models import CostCenter
from procurement.rules import delivery_dates

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# The operation, not the data: a paid request still shows its paymentMethod field.
PAYMENT_TRACES = ["pay_purchase_request", "pay-purchase-request", "/pay/"]


class ProcurementServer(Server):
    def __init__(self, url: str, procurement: ProcurementDemo) -> None:
        super().__init__(url, demo=None)  # type: ignore[arg-type]
        self.procurement = procurement

    def token(self, username: str) -> str:
        return str(AccessToken.for_user(self.procurement.users[username]))

    def pk(self, key: str) -> int:
        return self.procurement.request(key).pk


@pytest.fixture
def server(live_server: Any, procurement: ProcurementDemo) -> ProcurementServer:
    return ProcurementServer(live_server.url, procurement)


def procurement_tools(names: list[str]) -> list[str]:
    return [name for name in names if name.endswith(("_purchase_request", "_purchase_requests"))]


ROLE_TOOLS = {
    "rita": ["submit", "attach_quote", "withdraw"],
    "approver": ["submit", "attach_quote", "withdraw", "approve", "reject", "request_changes"],
    "buyer": ["order", "cancel", "expedite", "insure"],
    "receiving_clerk": ["receive", "file_claim", "recall"],
    "accounts_payable": ["invoice", "pay", "dispute_invoice"],
    "auditor": [],
}


@pytest.mark.parametrize("mode", MODES)
def test_each_role_lists_exactly_its_procurement_tools(
    server: ProcurementServer, mode: str
) -> None:
    async def scenario() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        listed, catalogs = {}, {}
        for role in ROLE_TOOLS:
            async with server.client(role, mode) as client:
                listed[role] = [tool.name for tool in (await client.list_tools()).tools]
            operations = (await server.rest(role, "/api/operations/"))["operations"]
            catalogs[role] = [operation["name"] for operation in operations]
        return listed, catalogs

    listed, catalogs = server.run(scenario)

    for role, verbs in ROLE_TOOLS.items():
        assert listed[role] == catalogs[role]
        tools = procurement_tools(listed[role])
        transitions = [t.removesuffix("_purchase_request") for t in tools[2:]]
        assert tools[:2] == ["get_purchase_request", "list_purchase_requests"]
        assert [t for t in transitions if t != "create"] == verbs
    for role in ("rita", "auditor", "buyer", "approver", "receiving_clerk"):
        assert "pay_purchase_request" not in listed[role]


@pytest.mark.parametrize("mode", MODES)
def test_policy_over_the_sdk(server: ProcurementServer, mode: str) -> None:
    own, limit, fits, race = (server.pk(k) for k in ("pr-05", "pr-04", "pr-08", "pr-09"))
    approved = server.pk("pr-11")
    dates = delivery_dates(server.procurement.request("pr-11"))

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with server.client("approver", mode) as client:
            for name, pk in (("own", own), ("limit", limit)):
                result = await client.call_tool("approve_purchase_request",
                                                {"purchaseRequestId": pk})  # fmt: skip
                seen[name] = problem_of(result)
            seen["fits"] = body_of(
                await client.call_tool("approve_purchase_request", {"purchaseRequestId": fits})
            )
            seen["exhausted"] = problem_of(
                await client.call_tool("approve_purchase_request", {"purchaseRequestId": race})
            )
        async with server.client("buyer", mode) as client:
            seen["bad_date"] = problem_of(
                await client.call_tool(
                    "order_purchase_request",
                    {"purchaseRequestId": approved, "deliveryDate": "2020-01-01"},
                )
            )
            seen["ordered"] = body_of(
                await client.call_tool(
                    "order_purchase_request",
                    {"purchaseRequestId": approved, "deliveryDate": dates[0]},
                )
            )
        return seen

    seen = server.run(scenario)

    assert (seen["own"]["code"], seen["own"]["reason"]) == (
        "operation_not_available",
        "own_request",
    )
    assert seen["limit"]["reason"] == "over_approval_limit"
    assert seen["fits"]["status"] == "approved"
    assert seen["exhausted"]["reason"] == "budget_exhausted"
    assert seen["exhausted"]["current"]["status"] == "submitted"
    assert seen["bad_date"]["code"] == "validation_error"
    assert "deliveryDate" in seen["bad_date"]["errors"]
    assert (seen["ordered"]["status"], seen["ordered"]["deliveryDate"]) == ("ordered", dates[0])
    assert CostCenter.objects.get(code="MKT").committed == 9600


@pytest.mark.parametrize("role", ["auditor", "rita"])
def test_no_trace_of_payment_for_roles_without_it(server: ProcurementServer, role: str) -> None:
    request = server.pk("pr-20" if role == "auditor" else "pr-21")

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with server.client(role, "legacy") as client:
            await client.list_tools()
            seen["read"] = body_of(
                await client.call_tool("get_purchase_request", {"purchaseRequestId": request})
            )
            for name in ("pay_purchase_request", "launch_rockets"):
                with pytest.raises(MCPError) as raised:
                    await client.call_tool(name, {"purchaseRequestId": request})
                seen[name] = raised.value.error
        return seen

    seen = server.run(scenario)

    assert seen["pay_purchase_request"].code == seen["launch_rockets"].code == -32602
    assert seen["pay_purchase_request"].message == seen["launch_rockets"].message
    text = server.recorder.text()
    sent_by_us = text.count("pay_purchase_request")  # our own two calls echo nothing
    assert sent_by_us == 0, "the server echoed the payment tool's name"
    for trace in PAYMENT_TRACES[1:]:
        assert trace not in text
