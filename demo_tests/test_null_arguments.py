"""``null`` for an optional argument is absent, on every face (docs/protocol.md#execution).

A strict-mode model fills every property of a tool, ``null`` for what it would leave
out (the MCP tool list offers that, affordances.mcp.tool_schemas.tool_input_schema); a client may
send ``null`` for an empty field. The rule is the core's (``affordances.arguments.
absent_nulls``, applied by the execution path and MCP's pre-check): REST, HAL-FORMS and
MCP answer alike, record alike, and replay alike. A required argument's ``null`` is
still refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from demo_tests.test_mcp_confirmations import ACCEPT, call
from orders.models import Order
from tests.mcp_wire import MODERN, Wire

Api = Callable[[str], APIClient]
HAL_FORMS = "application/prs.hal-forms+json"
# cancel_order as a strict-mode model sends it: every property, the optional ones null.
CANCEL = {"reason": "customer_request", "note": None, "expectedVersion": None}


def _rest(api: Api, pk: int, body: dict[str, Any], **extra: Any) -> Any:
    return api("support").post(f"/api/orders/{pk}/cancel/", body, format="json", **extra)


def _mcp(demo: Demo, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    wire = Wire(str(AccessToken.for_user(demo.users["support"])))
    return wire.tool("cancel_order", arguments, **params)


def _recorded(pk: int) -> dict[str, Any]:
    return AuditRecord.objects.get(object_id=str(pk), operation_name="cancel_order").arguments


def test_rest_takes_a_null_optional_argument_as_absent(api: Api, demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk
    response = _rest(api, pk, CANCEL)

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    assert _recorded(pk) == {"reason": "customer_request"}  # no note: none was given


def test_hal_forms_takes_a_null_optional_argument_as_absent(api: Api, demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk  # each test has the demo data afresh
    response = _rest(api, pk, CANCEL, HTTP_ACCEPT=HAL_FORMS)

    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith(HAL_FORMS)
    assert response.json()["status"] == "cancelled"
    assert _recorded(pk) == {"reason": "customer_request"}


def test_mcp_takes_a_null_optional_argument_as_absent(demo: Demo) -> None:
    # cancel_order asks the person first (docs/protocol.md#confirmations): a 2026-07-28
    # client that shows forms, and the person's yes sent back with the same arguments.
    pk = demo.orders["demo-03"].pk
    wire = Wire(str(AccessToken.for_user(demo.users["support"])), version=MODERN)
    arguments = {"orderId": pk, **CANCEL}
    asked = call(wire, "cancel_order", arguments)
    assert asked["resultType"] == "input_required", asked
    # The null optional arguments are absent, not missing: only the confirmation is asked.
    schema = asked["inputRequests"]["confirmation"]["params"]["requestedSchema"]
    assert schema["required"] == ["confirm"] and set(schema["properties"]) == {"confirm"}
    result = call(
        wire,
        "cancel_order",
        arguments,
        inputResponses=ACCEPT,
        requestState=asked["requestState"],
    )

    assert result["isError"] is False, result
    assert result["structuredContent"]["status"] == "cancelled"
    assert _recorded(pk) == {"reason": "customer_request"}


def test_a_read_takes_null_filters_and_paging_as_absent(demo: Demo) -> None:
    wire = Wire(str(AccessToken.for_user(demo.users["support"])))
    nulls = {"status": None, "customer": None, "page": None, "pageSize": None}

    assert wire.tool("list_orders", nulls) == wire.tool("list_orders", {})


def test_a_create_takes_a_null_optional_argument_as_absent(api: Api, demo: Demo) -> None:
    body = {"description": "Tea", "total": "3.50", "customer": None}
    response = api("alice").post("/api/orders/", body, format="json")

    assert response.status_code == 201, response.content
    assert Order.objects.get(pk=response.json()["id"]).customer.username == "alice"


@pytest.mark.parametrize("face", ["rest", "mcp"])
def test_a_null_required_argument_is_refused(api: Api, demo: Demo, face: str) -> None:
    order = demo.orders["demo-04"]
    body = {**CANCEL, "reason": None}
    if face == "rest":
        response = _rest(api, order.pk, body)
        assert response.status_code == 400, response.content
        problem = response.json()
    else:
        result = _mcp(demo, {"orderId": order.pk, **body})
        assert result["isError"] is True
        problem = result["structuredContent"]
    assert problem["code"] == "validation_error"
    assert set(problem["errors"]) == {"reason"}
    assert demo.order("demo-04").version == order.version


def test_a_null_and_an_absent_argument_are_one_request_to_an_idempotency_key(
    api: Api, demo: Demo
) -> None:
    pk = demo.orders["demo-10"].pk
    key = {"HTTP_IDEMPOTENCY_KEY": "null-is-absent"}
    first = _rest(api, pk, CANCEL, **key)
    again = _rest(api, pk, {"reason": "customer_request"}, **key)

    assert first.status_code == again.status_code == 200, again.content
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
