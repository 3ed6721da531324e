"""Confirmations over raw MCP JSON-RPC (docs/protocol.md#confirmations): a 2026-07-28
``tools/call`` of an operation that asks the person first answers ``InputRequiredResult``
with one form and a sealed ``requestState``; the retry runs once on accept, nothing on
decline or cancel, and a state altered, expired or echoed for another object is refused.

Every answer is validated with the protocol's own types for its revision.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core import signing
from django.test import override_settings
from mcp_types import methods
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.conf import settings
from affordances.execution import perform
from affordances.models import AuditRecord, IdempotencyRecord
from affordances.sealing import unseal
from demo_tests.conftest import Demo
from orders.models import Order
from tests.mcp_wire import LEGACY, MODERN, Wire, check

pytestmark = pytest.mark.django_db

ELICITING = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
ACCEPT = {"confirmation": {"action": "accept", "content": {"confirm": True}}}
SALT = "affordances:mcp-confirmation"


@pytest.fixture
def wire(demo: Demo) -> Callable[..., Wire]:
    def make(username: str, *, version: str = MODERN) -> Wire:
        return Wire(str(AccessToken.for_user(demo.users[username])), version=version)

    return make


def database_state() -> tuple:
    return (
        list(Order.objects.order_by("pk").values_list("pk", "status", "version")),
        AuditRecord.objects.count(),
        IdempotencyRecord.objects.count(),
    )


def call(wire: Wire, name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    """One tools/call from a client that declares form elicitation; the result, validated
    for the revision (an InputRequiredResult or a CallToolResult)."""
    meta = {**ELICITING, **params.pop("_meta", {})} if wire.version == MODERN else {}
    body = {"name": name, "arguments": arguments, **params}
    if meta:
        body["_meta"] = meta
    response = wire.request("tools/call", body)
    envelope = response.json()
    assert "result" in envelope, envelope
    result = envelope["result"]
    methods.parse_server_result("tools/call", wire.version, result)
    if result.get("resultType") != "input_required":
        check("tools/call", wire.version, envelope)
    return result


def ask(wire: Wire, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = call(wire, name, arguments)
    assert result["resultType"] == "input_required", result
    return result


def retry(
    wire: Wire,
    name: str,
    arguments: dict[str, Any],
    state: str,
    responses: Any = None,
    **params: Any,
) -> dict[str, Any]:
    return call(
        wire, name, arguments, inputResponses=responses or ACCEPT, requestState=state, **params
    )


def problem(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result["isError"] is True, result
    assert result["structuredContent"]["code"] == code, result["structuredContent"]
    return result["structuredContent"]


# --- asking ------------------------------------------------------------------------------


def test_a_call_that_needs_confirmation_answers_one_form_and_a_sealed_state(wire, demo):
    order = demo.orders["demo-01"]
    before = database_state()
    result = ask(
        wire("support"), "cancel_order", {"orderId": order.pk, "reason": "customer_request"}
    )

    assert set(result["inputRequests"]) == {"confirmation"}
    request = result["inputRequests"]["confirmation"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    message = request["params"]["message"]
    assert f"Order #{order.pk} (250.00 EUR" in message
    assert "cannot be undone" in message
    assert "status: pending → cancelled" in message
    schema = request["params"]["requestedSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["confirm"]["type"] == "boolean"
    assert schema["required"] == ["confirm"]
    state = unseal(result["requestState"], purpose="mcp-confirmation", max_age=600)
    assert state["v"] == order.version and state["k"] == str(order.pk)
    assert database_state() == before  # asking (its preview included) kept nothing


def test_accept_runs_once_and_the_same_state_again_runs_nothing(wire, demo):
    order = demo.orders["demo-01"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    audits = AuditRecord.objects.count()

    done = retry(client, "cancel_order", arguments, state)
    assert done["isError"] is False, done
    assert done["structuredContent"]["status"] == "cancelled"
    assert AuditRecord.objects.count() == audits + 1

    again = retry(client, "cancel_order", arguments, state)
    problem(again, "stale_version")
    assert AuditRecord.objects.count() == audits + 1


def test_accept_with_an_idempotency_key_replays_and_stores_one_run(wire, demo):
    order = demo.orders["demo-01"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    meta = {"affordances/idempotencyKey": "confirm-once-1"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    first = retry(client, "cancel_order", arguments, state, _meta=meta)
    second = retry(client, "cancel_order", arguments, state, _meta=meta)
    assert first["isError"] is False and second["isError"] is False
    assert second["_meta"]["affordances/replayed"] is True
    assert AuditRecord.objects.filter(object_id=str(order.pk)).count() == 1


@pytest.mark.parametrize(
    ("responses", "said"),
    [
        ({"confirmation": {"action": "decline"}}, "declined"),
        ({"confirmation": {"action": "cancel"}}, "dismissed"),
        ({"confirmation": {"action": "accept", "content": {"confirm": False}}}, "unconfirmed"),
    ],
    ids=["decline", "cancel", "accept-unchecked"],
)
def test_decline_or_cancel_runs_nothing_and_says_so(wire, demo, responses, said):
    order = demo.orders["demo-01"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    before = database_state()
    body = problem(
        retry(client, "cancel_order", arguments, state, responses), "confirmation_declined"
    )
    assert said in body["detail"] and "did not run" in body["detail"]
    assert database_state() == before


def test_a_missing_required_input_is_asked_with_only_the_values_the_object_allows(wire, demo):
    order = demo.orders["demo-01"]  # payment authorized: payment_failure is not offered
    client = wire("support")
    result = ask(client, "cancel_order", {"orderId": order.pk})
    schema = result["inputRequests"]["confirmation"]["params"]["requestedSchema"]
    assert schema["required"] == ["reason", "confirm"]
    assert schema["properties"]["reason"]["type"] == "string"
    assert schema["properties"]["reason"]["enum"] == ["customer_request", "inventory_failure"]

    refused = retry(
        client,
        "cancel_order",
        {"orderId": order.pk},
        result["requestState"],
        {
            "confirmation": {
                "action": "accept",
                "content": {"reason": "payment_failure", "confirm": True},
            }
        },
    )
    problem(refused, "validation_error")
    assert Order.objects.get(pk=order.pk).status == "pending"

    done = retry(
        client,
        "cancel_order",
        {"orderId": order.pk},
        result["requestState"],
        {
            "confirmation": {
                "action": "accept",
                "content": {"reason": "inventory_failure", "confirm": True},
            }
        },
    )
    assert done["isError"] is False, done
    record = AuditRecord.objects.get(object_id=str(order.pk))
    assert record.arguments["reason"] == "inventory_failure"


def test_a_missing_input_of_an_operation_without_confirmation_is_asked_too(wire, demo):
    order = demo.orders["demo-05"]  # confirmed: ship_order needs a tracking number
    client = wire("warehouse")
    result = ask(client, "ship_order", {"orderId": order.pk})
    schema = result["inputRequests"]["confirmation"]["params"]["requestedSchema"]
    assert schema["required"] == ["trackingNumber"]
    assert "confirm" not in schema["properties"]
    done = retry(
        client,
        "ship_order",
        {"orderId": order.pk},
        result["requestState"],
        {"confirmation": {"action": "accept", "content": {"trackingNumber": "TRK12345678"}}},
    )
    assert done["isError"] is False, done
    assert Order.objects.get(pk=order.pk).tracking_number == "TRK12345678"


def test_a_changed_object_between_the_two_calls_is_stale_with_its_current_representation(
    wire, demo
):
    order = demo.orders["demo-01"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    perform(  # another user confirms the order meanwhile
        operation=get_catalog().lookup("confirm_order"),
        pk=order.pk,
        user=demo.users["supervisor"],
        arguments={},
        via="api",
        represent=lambda instance: {},
    )
    audits = AuditRecord.objects.count()
    body = problem(retry(client, "cancel_order", arguments, state), "stale_version")
    assert body["current"]["status"] == "confirmed"
    assert body["current"]["version"] == order.version + 1
    assert AuditRecord.objects.count() == audits


# --- refused states ----------------------------------------------------------------------


def _expired(token: str) -> str:
    """The same state, sealed with the real key as if CONFIRMATION_TTL ago and more."""
    payload = unseal(token, purpose="mcp-confirmation", max_age=600)

    class Earlier(signing.TimestampSigner):
        def timestamp(self) -> str:
            return signing.b62_encode(int(time.time()) - settings.CONFIRMATION_TTL - 5)

    return Earlier(salt=SALT).sign_object(payload, compress=True)


def _tampered(token: str) -> str:
    middle = len(token) // 2
    return token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]


@pytest.mark.parametrize("spoil", [_tampered, _expired], ids=["tampered", "expired"])
def test_a_tampered_or_expired_state_is_refused_and_runs_nothing(wire, demo, spoil):
    order = demo.orders["demo-01"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    before = database_state()
    problem(retry(client, "cancel_order", arguments, spoil(state)), "confirmation_required")
    assert database_state() == before
    # The genuine state still works: one run, one audit record.
    assert retry(client, "cancel_order", arguments, state)["isError"] is False
    assert AuditRecord.objects.count() == before[1] + 1


def test_a_state_reused_for_another_object_other_arguments_or_caller_is_refused(wire, demo):
    order, other = demo.orders["demo-01"], demo.orders["demo-10"]
    client = wire("support")
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    state = ask(client, "cancel_order", arguments)["requestState"]
    before = database_state()
    for name, args, caller in [
        ("cancel_order", {"orderId": other.pk, "reason": "customer_request"}, client),
        ("cancel_order", {"orderId": order.pk, "reason": "inventory_failure"}, client),
        ("cancel_order", arguments, wire("supervisor")),
        ("confirm_order", {"orderId": order.pk}, client),
    ]:
        problem(retry(caller, name, args, state), "confirmation_required")
    assert database_state() == before


# --- clients that cannot be asked --------------------------------------------------------


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_a_client_that_cannot_ask_is_refused_with_the_preview(demo, version):
    order = demo.orders["demo-01"]
    client = Wire(str(AccessToken.for_user(demo.users["support"])), version=version)
    before = database_state()
    # No elicitation capability declared (the modern wire's default _meta declares none).
    result = client.tool("cancel_order", {"orderId": order.pk, "reason": "customer_request"})
    body = problem(result, "confirmation_required")
    assert body["status"] == 428
    assert body["consequence"].startswith(f"Order #{order.pk}")
    assert body["preview"]["stateChange"] == {
        "field": "status",
        "from": "pending",
        "to": "cancelled",
    }
    assert body["preview"]["validForVersion"] == order.version
    assert database_state() == before


def test_operations_without_confirmation_run_in_one_call_as_before(demo):
    order = demo.orders["demo-05"]
    client = Wire(str(AccessToken.for_user(demo.users["warehouse"])), version=LEGACY)
    result = client.tool("ship_order", {"orderId": order.pk, "trackingNumber": "TRK12345678"})
    assert result["isError"] is False


# --- no person to ask: AFFORDANCES["CONFIRMATIONS"] = False ------------------------------


def _catalog_entry(api: Any, name: str) -> dict[str, Any]:
    operations = api("support").get("/api/operations/").json()["operations"]
    (entry,) = [operation for operation in operations if operation["name"] == name]
    return entry


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_with_confirmations_off_nothing_asks_and_the_call_runs_at_once(demo, api, version):
    order = demo.orders["demo-01"]
    assert _catalog_entry(api, "cancel_order")["confirmationRequired"] is True  # on: asks
    client = Wire(str(AccessToken.for_user(demo.users["support"])), version=version)
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    off = {**django_settings.AFFORDANCES, "CONFIRMATIONS": False}
    with override_settings(AFFORDANCES=off):
        entry = _catalog_entry(api, "cancel_order")
        read = api("support").get(f"/api/orders/{order.pk}/").json()
        # On 2026-07-28 from a client that could show a form: none is shown.
        result = call(client, "cancel_order", arguments)

    # The member is there only when true: off, neither the entry nor the affordance has it.
    assert entry.get("confirmationRequired", False) is False
    (affordance,) = [a for a in read["affordances"] if a["name"] == "cancel_order"]
    assert "confirmationRequired" not in affordance
    assert result.get("resultType", "complete") == "complete"
    assert result["isError"] is False, result
    assert result["structuredContent"]["status"] == "cancelled"
    record = AuditRecord.objects.get(object_id=str(order.pk))
    assert (record.operation_name, record.via) == ("cancel_order", "mcp")
    assert Order.objects.get(pk=order.pk).status == "cancelled"


# --- a replay runs nothing: nobody needs asking ------------------------------------------


@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_a_replay_of_a_completed_run_replays_without_asking(demo, api, version):
    order = demo.orders["demo-01"]
    first = (
        api("support")
        .post(
            f"/api/orders/{order.pk}/cancel/",
            {"reason": "customer_request"},
            format="json",
            HTTP_IDEMPOTENCY_KEY="k-1",
        )
        .json()
    )
    assert first["status"] == "cancelled"
    client = Wire(str(AccessToken.for_user(demo.users["support"])), version=version)
    arguments = {"orderId": order.pk, "reason": "customer_request"}
    key = {"affordances/idempotencyKey": "k-1"}
    if version == LEGACY:
        result = client.tool("cancel_order", arguments, _meta=key)
    else:  # from a client that could show a form
        result = call(client, "cancel_order", arguments, _meta=key)
    assert result.get("resultType", "complete") == "complete", result
    assert result["isError"] is False, result
    assert result["_meta"]["affordances/replayed"] is True
    assert AuditRecord.objects.filter(object_id=str(order.pk)).count() == 1
