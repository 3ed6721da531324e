"""Confirmations with the official ``mcp`` SDK client (2026-07-28) against a live server
(docs/protocol.md#confirmations): the SDK drives ``InputRequiredResult`` itself, showing
the form through its ``elicitation_callback`` and retrying with the person's answer and
the echoed ``requestState``.

Every HTTP exchange is recorded and each answer checked with the protocol's own types
for its revision (an ``InputRequiredResult`` as one, every other result as
``tests.mcp_wire.check`` checks it).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import ElicitResult, methods

from affordances.models import AuditRecord, IdempotencyRecord
from demo_tests.conftest import Demo
from demo_tests.test_mcp_sdk import Recorder, Server, body_of, problem_of
from orders.models import Order
from tests.mcp_wire import MODERN, check

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class Checked(Recorder):
    def check_all(self) -> list[dict[str, Any]]:
        envelopes = []
        for sent, version, status, content in self.exchanges:
            assert status < 500, content
            if "id" not in sent:
                continue
            envelope = json.loads(content)
            result = envelope.get("result", {})
            if result.get("resultType") == "input_required":
                methods.parse_server_result(sent["method"], version or MODERN, result)
            else:
                check(sent["method"], version or MODERN, envelope)
            envelopes.append(envelope)
        return envelopes

    def input_required(self) -> list[dict[str, Any]]:
        return [r for r in self.results("tools/call") if r.get("resultType") == "input_required"]


class Asking(Server):
    """The live server, and a client that answers every form with ``answer(params)``."""

    def __init__(self, url: str, demo: Demo) -> None:
        super().__init__(url, demo)
        self.recorder = Checked()
        self.asked: list[Any] = []

    def connect(self, username: str, answer: Any) -> Any:
        async def elicitation_callback(context: Any, params: Any) -> ElicitResult:
            self.asked.append(params)
            return await answer(params)

        headers = {"Authorization": f"Bearer {self.token(username)}"}
        hooks = {"response": [self.recorder.on_response]}
        server = self

        class Connection:
            async def __aenter__(self) -> Client:
                self.http = httpx2.AsyncClient(headers=headers, event_hooks=hooks, timeout=30)
                await self.http.__aenter__()
                self.client = Client(
                    streamable_http_client(f"{server.url}/mcp", http_client=self.http),
                    mode="auto",
                    elicitation_callback=elicitation_callback,
                )
                return await self.client.__aenter__()

            async def __aexit__(self, *exc: Any) -> None:
                await self.client.__aexit__(*exc)
                await self.http.__aexit__(*exc)

        return Connection()


@pytest.fixture
def server(live_server: Any, demo: Demo) -> Asking:
    return Asking(live_server.url, demo)


def accept(content: dict[str, Any]) -> Any:
    async def answer(params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content=content)

    return answer


def refuse(action: str) -> Any:
    async def answer(params: Any) -> ElicitResult:
        return ElicitResult(action=action)

    return answer


def counts() -> tuple[int, int]:
    return AuditRecord.objects.count(), IdempotencyRecord.objects.count()


def test_accept_runs_the_operation_once(server: Asking) -> None:
    pk = server.pk("demo-01")
    before = counts()

    async def scenario() -> Any:
        async with server.connect("support", accept({"confirm": True})) as client:
            assert client.protocol_version == MODERN
            return await client.call_tool(
                "cancel_order", {"orderId": pk, "reason": "customer_request"}
            )

    body = body_of(server.run(scenario))
    assert body["status"] == "cancelled"
    [params] = server.asked
    assert params.mode == "form"
    assert f"Order #{pk} (250.00 EUR" in params.message
    assert "status: pending → cancelled" in params.message
    assert params.requested_schema["properties"]["confirm"]["type"] == "boolean"
    assert len(server.recorder.input_required()) == 1
    assert Order.objects.get(pk=pk).status == "cancelled"
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1
    assert counts() == (before[0] + 1, before[1])


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_decline_and_cancel_run_nothing_and_say_so(server: Asking, action: str) -> None:
    pk = server.pk("demo-01")
    before = counts()

    async def scenario() -> Any:
        async with server.connect("support", refuse(action)) as client:
            return await client.call_tool(
                "cancel_order", {"orderId": pk, "reason": "customer_request"}
            )

    problem = problem_of(server.run(scenario))
    assert problem["code"] == "confirmation_declined"
    assert "did not run" in problem["detail"]
    assert len(server.asked) == 1
    assert Order.objects.get(pk=pk).status == "pending"
    assert counts() == before


def test_a_missing_required_input_is_supplied_through_the_form(server: Asking) -> None:
    pk = server.pk("demo-01")

    async def scenario() -> Any:
        answer = accept({"reason": "inventory_failure", "confirm": True})
        async with server.connect("support", answer) as client:
            return await client.call_tool("cancel_order", {"orderId": pk})

    body = body_of(server.run(scenario))
    assert body["status"] == "cancelled"
    [params] = server.asked
    reason = params.requested_schema["properties"]["reason"]
    assert reason["enum"] == ["customer_request", "inventory_failure"]
    assert params.requested_schema["required"] == ["reason", "confirm"]
    record = AuditRecord.objects.get(object_id=str(pk))
    assert record.arguments["reason"] == "inventory_failure"
    assert record.via == "mcp"


def test_a_change_by_another_user_between_the_two_calls_is_stale_version(
    server: Asking,
) -> None:
    pk = server.pk("demo-01")

    async def meanwhile(params: Any) -> ElicitResult:
        # While the person reads the form, the supervisor confirms the order over REST.
        headers = {"Authorization": f"Bearer {server.token('supervisor')}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            response = await http.post(f"{server.url}/api/orders/{pk}/confirm/", json={})
        assert response.status_code == 200, response.text
        return ElicitResult(action="accept", content={"confirm": True})

    async def scenario() -> Any:
        async with server.connect("support", meanwhile) as client:
            return await client.call_tool(
                "cancel_order", {"orderId": pk, "reason": "customer_request"}
            )

    problem = problem_of(server.run(scenario))
    assert problem["code"] == "stale_version"
    assert problem["current"]["status"] == "confirmed"
    assert Order.objects.get(pk=pk).status == "confirmed"
    assert AuditRecord.objects.filter(object_id=str(pk), operation_name="cancel_order").count() == 0
