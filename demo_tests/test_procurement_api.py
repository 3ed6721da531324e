"""Procurement operations executed over REST: rules enforced, budget consumed, traps run.

The affordances say what applies; these tests check that execution agrees — refusals
with the same machine reason, narrowed inputs refused, the cost center's budget moved.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from demo_tests.conftest import ProcurementDemo
from procurement.models import CostCenter, PurchaseRequest
from procurement.rules import delivery_dates

Api = Callable[[str], APIClient]


def run(api: Api, role: str, request: PurchaseRequest, operation: str, **arguments: Any) -> Any:
    return api(role).post(
        f"/api/purchase-requests/{request.pk}/{operation}/", arguments, format="json"
    )


def refused(response: Any, status: int, code: str, reason: str | None = None) -> bool:
    body = response.json()
    return (
        response.status_code == status
        and body["code"] == code
        and (reason is None or body.get("reason") == reason)
    )


def committed(code: str) -> Decimal:
    return CostCenter.objects.get(code=code).committed


def test_a_request_through_its_whole_life(api: Api, procurement: ProcurementDemo) -> None:
    created = api("rita").post(
        "/api/purchase-requests/",
        {
            "title": "Standing desks",
            "costCenter": "IT",
            "supplier": "Stark Industries",
            "quantity": 4,
            "unitPrice": "3000.00",
            "neededBy": "2030-06-30",
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    request = PurchaseRequest.objects.get(pk=created.json()["id"])
    before = committed("IT")

    assert refused(run(api, "rita", request, "submit"), 409, "operation_not_available",
                   "quote_missing")  # fmt: skip
    steps: list[tuple[str, str, dict[str, Any], str]] = [
        ("rita", "attach_quote", {"quoteReference": "Q-9001"}, "draft"),
        ("rita", "submit", {}, "submitted"),
        ("senior_approver", "approve", {"note": "ok"}, "approved"),
        ("buyer", "order", {"deliveryDate": delivery_dates(request)[0]}, "ordered"),
        ("receiving_clerk", "receive", {"quantity": 4}, "received"),
        ("accounts_payable", "invoice", {"invoiceNumber": "INV-1", "amount": "12100.00"},
         "invoiced"),
        ("accounts_payable", "pay", {"paymentMethod": "bank_transfer"}, "paid"),
    ]  # fmt: skip
    for role, operation, arguments, status in steps:
        response = run(api, role, request, operation, **arguments)
        assert response.status_code == 200, (operation, response.content)
        assert response.json()["status"] == status
        if operation == "approve":
            assert committed("IT") == before + Decimal("12000.00")
    request.refresh_from_db()
    assert request.po_number == f"PO-{request.pk:06d}"
    assert (request.payment_method, request.version) == ("bank_transfer", 8)
    # Paid: the reservation is replaced by what was really paid.
    assert committed("IT") == before + Decimal("12100.00")


@pytest.mark.parametrize(
    ("role", "key", "operation", "reason"),
    [
        ("approver", "pr-05", "approve", "own_request"),
        ("approver", "pr-05", "reject", "own_request"),
        ("approver", "pr-04", "approve", "over_approval_limit"),
        ("senior_approver", "pr-10", "approve", "over_approval_limit"),
        ("senior_approver", "pr-06", "approve", "supplier_blocked"),
        ("senior_approver", "pr-07", "approve", "budget_exhausted"),
        ("remy", "pr-01", "submit", "not_requester"),
    ],
)
def test_execution_refuses_with_the_affordances_reason(
    api: Api, procurement: ProcurementDemo, role: str, key: str, operation: str, reason: str
) -> None:
    request = procurement.request(key)
    arguments = {"reason": "not_needed"} if operation == "reject" else {}
    response = run(api, role, request, operation, **arguments)
    if role == "remy":  # rita's draft is not even visible to remy
        assert refused(response, 404, "not_found")
    else:
        assert refused(response, 409, "operation_not_available", reason)
    assert procurement.request(key).version == request.version


def test_approvals_consume_the_budget_until_it_is_exhausted(
    api: Api, procurement: ProcurementDemo
) -> None:
    assert committed("MKT") == Decimal("9000.00")  # 1000 left
    first = run(api, "senior_approver", procurement.request("pr-08"), "approve")
    assert first.status_code == 200
    assert committed("MKT") == Decimal("9600.00")
    second = run(api, "approver", procurement.request("pr-09"), "approve")
    assert refused(second, 409, "operation_not_available", "budget_exhausted")
    assert committed("MKT") == Decimal("9600.00")
    assert procurement.request("pr-09").status == "submitted"


def test_cancelling_releases_the_reserved_budget(api: Api, procurement: ProcurementDemo) -> None:
    before = committed("IT")
    response = run(api, "buyer", procurement.request("pr-11"), "cancel", reason="duplicate")
    assert response.status_code == 200
    assert committed("IT") == before - Decimal("1000.00")


def test_rejecting_and_requesting_changes_reserve_nothing(
    api: Api, procurement: ProcurementDemo
) -> None:
    before = committed("IT")
    assert run(api, "approver", procurement.request("pr-03"), "reject",
               reason="not_needed").status_code == 200  # fmt: skip
    changed = run(api, "approver", procurement.request("pr-04"), "request_changes", note="split")
    assert changed.json()["status"] == "draft"
    assert committed("IT") == before


# --- narrowed inputs are enforced on execution ---------------------------------------


def test_a_delivery_date_outside_the_offer_is_refused(
    api: Api, procurement: ProcurementDemo
) -> None:
    request = procurement.request("pr-11")
    too_early = run(api, "buyer", request, "order", deliveryDate="2026-01-01")
    assert refused(too_early, 400, "validation_error")
    assert set(too_early.json()["errors"]) == {"deliveryDate"}
    offered = run(api, "buyer", request, "order", deliveryDate=delivery_dates(request)[-1])
    assert offered.status_code == 200


def test_a_receipt_above_the_ordered_quantity_is_refused(
    api: Api, procurement: ProcurementDemo
) -> None:
    request = procurement.request("pr-16")  # 40 ordered
    assert refused(run(api, "receiving_clerk", request, "receive", quantity=41), 400,
                   "validation_error")  # fmt: skip
    partial = run(api, "receiving_clerk", request, "receive", quantity=38)
    assert partial.status_code == 200
    # A partial delivery makes the claim trap apply.
    names = [a["name"] for a in partial.json()["affordances"]]
    assert "file_claim_purchase_request" in names


def test_card_payment_only_up_to_its_limit(api: Api, procurement: ProcurementDemo) -> None:
    large = run(api, "accounts_payable", procurement.request("pr-22"), "pay", paymentMethod="card")
    assert refused(large, 400, "validation_error")
    small = run(api, "accounts_payable", procurement.request("pr-20"), "pay", paymentMethod="card")
    assert small.status_code == 200


@pytest.mark.parametrize(("amount", "payable"), [("306.00", True), ("306.01", False)])
def test_an_invoice_must_match_within_two_percent(
    api: Api, procurement: ProcurementDemo, amount: str, payable: bool
) -> None:
    request = procurement.request("pr-19")  # 10 received at 30.00
    invoiced = run(api, "accounts_payable", request, "invoice", invoiceNumber="I-9", amount=amount)
    names = {a["name"] for a in invoiced.json()["affordances"]}
    assert ("pay_purchase_request" in names) is payable
    assert ("dispute_invoice_purchase_request" in names) is not payable
    paid = run(api, "accounts_payable", request, "pay", paymentMethod="bank_transfer")
    if payable:
        assert paid.status_code == 200
    else:
        assert refused(paid, 409, "operation_not_available", "invoice_mismatch")


# --- the traps, run where they apply -------------------------------------------------


def test_expedite_moves_the_delivery_to_the_needed_by_date(
    api: Api, procurement: ProcurementDemo
) -> None:
    request = procurement.request("pr-14")
    body = run(api, "buyer", request, "expedite").json()
    assert (body["status"], body["expedited"]) == ("ordered", True)
    assert body["deliveryDate"] == request.needed_by.isoformat()
    again = run(api, "buyer", request, "expedite")
    assert refused(again, 409, "operation_not_available", "delivery_on_time")


@pytest.mark.parametrize(
    ("role", "key", "operation", "arguments", "field", "again"),
    [
        ("buyer", "pr-15", "insure", {}, "insured", "already_insured"),
        ("receiving_clerk", "pr-17", "file_claim", {"description": "5 missing"}, "claim",
         "claim_already_filed"),
        ("receiving_clerk", "pr-18", "recall", {"note": "batch 4471"}, "recalled",
         "already_recalled"),
    ],
)  # fmt: skip
def test_a_trap_runs_once_where_it_applies(
    api: Api,
    procurement: ProcurementDemo,
    role: str,
    key: str,
    operation: str,
    arguments: dict[str, Any],
    field: str,
    again: str,
) -> None:
    request = procurement.request(key)
    response = run(api, role, request, operation, **arguments)
    assert response.status_code == 200, response.content
    assert response.json()[field] and response.json()["status"] == request.status
    assert refused(run(api, role, request, operation, **arguments), 409,
                   "operation_not_available", again)  # fmt: skip


def test_disputing_an_invoice_returns_the_request_to_received(
    api: Api, procurement: ProcurementDemo
) -> None:
    request = procurement.request("pr-21")
    body = run(api, "accounts_payable", request, "dispute_invoice", reason="600 too much").json()
    assert (body["status"], body["invoiceAmount"], body["invoiceNumber"]) == ("received", None, "")
    corrected = run(api, "accounts_payable", request, "invoice", invoiceNumber="I-2",
                    amount="2000.00")  # fmt: skip
    assert "pay_purchase_request" in {a["name"] for a in corrected.json()["affordances"]}


@pytest.mark.parametrize(
    ("role", "key", "operation"),
    [("buyer", "pr-16", "expedite"), ("buyer", "pr-16", "insure"),
     ("receiving_clerk", "pr-19", "file_claim"), ("receiving_clerk", "pr-19", "recall"),
     ("accounts_payable", "pr-20", "dispute_invoice")],
)  # fmt: skip
def test_a_trap_is_refused_where_it_does_not_apply(
    api: Api, procurement: ProcurementDemo, role: str, key: str, operation: str
) -> None:
    request = procurement.request(key)
    arguments = {
        "file_claim": {"description": "x"},
        "recall": {"note": "x"},
        "dispute_invoice": {"reason": "x"},
    }.get(operation, {})
    response = run(api, role, request, operation, **arguments)
    assert refused(response, 409, "operation_not_available")
    assert procurement.request(key).version == request.version


# --- capabilities: a role without one learns nothing ---------------------------------


@pytest.mark.parametrize("role", ["rita", "auditor", "buyer", "approver"])
def test_payment_is_unknown_to_roles_without_it(
    api: Api, procurement: ProcurementDemo, role: str
) -> None:
    request = procurement.request("pr-20" if role != "rita" else "pr-21")
    response = run(api, role, request, "pay", paymentMethod="bank_transfer")
    missing = api(role).post("/api/purchase-requests/999999/pay/", {}, format="json")
    assert response.status_code == missing.status_code == 404
    assert response.content == missing.content
    catalog = api(role).get("/api/operations/").content.decode()
    assert "pay_purchase_request" not in catalog and "pay-purchase-request" not in catalog


def test_auditor_reads_every_request_and_runs_none(api: Api, procurement: ProcurementDemo) -> None:
    body = api("auditor").get("/api/purchase-requests/?page_size=200").json()
    assert body["count"] == PurchaseRequest.objects.count()
    assert all(
        r["affordances"] == [] and r["unavailableAffordances"] == [] for r in body["results"]
    )


def test_requesters_see_only_their_own(api: Api, procurement: ProcurementDemo) -> None:
    body = api("remy").get("/api/purchase-requests/?page_size=200").json()
    assert {r["requester"] for r in body["results"]} == {"remy"}
    assert body["count"] == PurchaseRequest.objects.filter(requester__username="remy").count()
