"""Property-based fuzzing of the procurement tools over MCP (A and B), as for orders.

Real procurement tools with near-valid arguments (real request ids, enum members, dates
on and off the supplier's offer, quantities around the ordered one, amounts around the
tolerance) or junk, by every procurement role. Every answer is a well-formed JSON-RPC
answer and never a 5xx (``tests.test_fuzz_mcp.check_answer``); a call that failed
changes nothing: no request's version or status, no cost center's committed budget, no
audit record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.models import AuditRecord
from demo_tests.conftest import PROCUREMENT_ROLES, ProcurementDemo
from demo_tests.test_fuzz_mcp import (
    ENDPOINTS,
    FUZZ,
    _body,
    _version_headers,
    check_answer,
    failed,
    json_values,
    strings,
    valid_ids,
)
from procurement.models import CostCenter, PurchaseRequest
from tests.mcp_wire import LEGACY, MODERN, check, modern_meta


def state() -> tuple[Any, ...]:
    requests = tuple(PurchaseRequest.objects.order_by("pk").values_list("pk", "version", "status"))
    budgets = tuple(CostCenter.objects.order_by("pk").values_list("pk", "committed"))
    return requests, budgets, AuditRecord.objects.count()


class Caller:
    def __init__(self, procurement: ProcurementDemo, path: str) -> None:
        self.path = path
        self.client = Client()
        self.tokens = {
            name: str(AccessToken.for_user(procurement.users[name])) for name in PROCUREMENT_ROLES
        }

    def exchange(self, role: str, body: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
        before = state()
        headers = {
            "Authorization": f"Bearer {self.tokens[role]}",
            "Accept": "application/json, text/event-stream",
            **headers,
        }
        try:
            response = self.client.post(
                self.path, data=body, content_type="application/json", headers=headers
            )
        except Exception as exc:  # the test client re-raises what the view raised: a 500
            exc.add_note(f"POST {self.path} as {role}: {body!r}")
            raise
        envelope = check_answer(body, response)
        if failed(response, envelope):
            assert state() == before, (body, response.content)
        return envelope


def _tools() -> dict[str, list[str]]:
    """Each procurement tool and the argument names of its input schema."""
    return {
        op.name: sorted(op.input_schema.get("properties", {}))
        for op in get_catalog()
        if op.resource.name == "purchase_request"
    }


def _values() -> dict[str, st.SearchStrategy[Any]]:
    pks = sorted(PurchaseRequest.objects.values_list("pk", flat=True))

    def plausible(*values: Any) -> st.SearchStrategy[Any]:
        return st.one_of(st.sampled_from(values), st.sampled_from(values), json_values)

    money = ["306.00", "306.01", "0.01", "0", "-1", "1e3", 10, 50000.01, "abc"]
    return {
        "purchaseRequestId": st.one_of(st.sampled_from(pks), plausible(0, 2**64, str(pks[0]))),
        "expectedVersion": plausible(1, 2, "1", 0, -1, True),
        "note": st.one_of(strings, json_values),
        "reason": plausible("not_needed", "duplicate", "over_budget", "x"),
        "quoteReference": plausible("Q-1234", "Q-1", "q-1234", ""),
        "deliveryDate": plausible("2030-01-02", "2026-12-31", "2020-01-01", "not a date"),
        "quantity": plausible(1, 38, 40, 41, 0, -1, "5", 10**9),
        "invoiceNumber": plausible("INV-1", "", "x" * 31),
        "amount": plausible(*money),
        "paymentMethod": plausible("card", "cheque", "bank_transfer", "cash"),
        "description": st.one_of(strings, plausible("x" * 501)),
        "title": st.one_of(strings, plausible("Chairs")),
        "costCenter": plausible("IT", "OPS", "MKT", "FAC", "nope"),
        "supplier": plausible("Acme Office", "Globex", "nope"),
        "unitPrice": plausible(*money),
        "neededBy": plausible("2030-01-31", "1999-01-01", "x"),
        "status": plausible("submitted", "approved", "x"),
        "requester": plausible("rita", "remy", "nobody"),
        "page": plausible(1, 2, 0, "1"),
        "pageSize": plausible(1, 50, 201, 0),
    }


@pytest.fixture
def caller(procurement: ProcurementDemo) -> Callable[[str], Caller]:
    return lambda interface: Caller(procurement, ENDPOINTS[interface])


@pytest.mark.django_db
@pytest.mark.parametrize("interface", ["A", "B"])
@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_procurement_tools_with_random_arguments_never_half_apply(
    caller: Callable[[str], Caller], interface: str, version: str
) -> None:
    endpoint = caller(interface)
    tools, values = _tools(), _values()
    junk = st.dictionaries(strings, json_values, max_size=2)

    def near_valid(name: str) -> st.SearchStrategy[Any]:
        known = {key: values.get(key, json_values) for key in tools[name]}
        shaped = st.fixed_dictionaries({}, optional=known)
        return st.one_of(shaped, shaped, st.tuples(shaped, junk).map(lambda b: {**b[1], **b[0]}))

    calls = st.sampled_from(sorted(tools)).flatmap(
        lambda name: st.tuples(st.just(name), near_valid(name))
    )

    @FUZZ
    @given(
        request_id=valid_ids,
        tool_call=calls,
        role=st.sampled_from(PROCUREMENT_ROLES),
    )
    def fuzz(request_id: Any, tool_call: tuple[str, Any], role: str) -> None:
        name, arguments = tool_call
        call: dict[str, Any] = {"name": name, "arguments": arguments}
        headers = _version_headers(version)
        if version == MODERN:
            call["_meta"] = modern_meta()
            headers["Mcp-Method"] = "tools/call"
            headers["Mcp-Name"] = name
        envelope = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
        answer = endpoint.exchange(role, _body(envelope), headers)
        if answer is not None and "result" in answer:
            check("tools/call", version, answer)

    fuzz()
