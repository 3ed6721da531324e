"""Procurement policy over REST: two requests in one state differ in what applies.

Every rule and every trap of ``procurement.rules``, each seen from a demo request that
exercises it (``procurement.demo``): available where the rule holds, unavailable with
its machine reason where it does not — and never seen by a role without the capability.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from demo_tests.conftest import ProcurementDemo
from procurement.models import Supplier

Api = Callable[[str], APIClient]
SUFFIX = "_purchase_request"


def detail(api: Api, role: str, procurement: ProcurementDemo, key: str) -> dict[str, Any]:
    response = api(role).get(f"/api/purchase-requests/{procurement.request(key).pk}/")
    assert response.status_code == 200, response.content
    return response.json()


def affordances(body: dict[str, Any]) -> tuple[set[str], dict[str, str]]:
    available = {a["name"].removesuffix(SUFFIX) for a in body["affordances"]}
    unavailable = {
        u["name"].removesuffix(SUFFIX): u["reason"] for u in body["unavailableAffordances"]
    }
    return available, unavailable


# (role, request, operation, expected reason or None for available). Each row is one
# rule or trap on the request the seed made for it, next to a request in the same
# state where the outcome differs.
CASES = [
    # quote above 10000
    ("rita", "pr-01", "submit", None),
    ("rita", "pr-02", "submit", "quote_missing"),
    ("rita", "pr-02", "attach_quote", None),
    # a requester acts only on her own drafts; approvers see others' with not_requester
    ("approver", "pr-01", "submit", "not_requester"),
    # four eyes
    ("approver", "pr-05", "approve", "own_request"),
    ("approver", "pr-05", "reject", "own_request"),
    ("senior_approver", "pr-05", "approve", None),
    # approval limits per role
    ("approver", "pr-03", "approve", None),
    ("approver", "pr-04", "approve", "over_approval_limit"),
    ("senior_approver", "pr-04", "approve", None),
    ("senior_approver", "pr-10", "approve", "over_approval_limit"),
    # blocked supplier, on approving and on ordering
    ("senior_approver", "pr-06", "approve", "supplier_blocked"),
    ("buyer", "pr-13", "order", "supplier_blocked"),
    # budget
    ("senior_approver", "pr-07", "approve", "budget_exhausted"),
    ("senior_approver", "pr-08", "approve", None),
    # period freeze
    ("buyer", "pr-11", "order", None),
    ("buyer", "pr-12", "order", "period_frozen"),
    # invoice tolerance
    ("accounts_payable", "pr-20", "pay", None),
    ("accounts_payable", "pr-21", "pay", "invoice_mismatch"),
    # trap 1: expedite
    ("buyer", "pr-14", "expedite", None),
    ("buyer", "pr-15", "expedite", "no_express_service"),
    ("buyer", "pr-16", "expedite", "no_express_service"),
    # trap 2: insure
    ("buyer", "pr-15", "insure", None),
    ("buyer", "pr-14", "insure", "below_insurance_threshold"),
    # trap 3: file a claim
    ("receiving_clerk", "pr-17", "file_claim", None),
    ("receiving_clerk", "pr-19", "file_claim", "nothing_missing"),
    # trap 4: recall
    ("receiving_clerk", "pr-18", "recall", None),
    ("receiving_clerk", "pr-19", "recall", "no_recall_notice"),
    # trap 5: dispute the invoice
    ("accounts_payable", "pr-21", "dispute_invoice", None),
    ("accounts_payable", "pr-20", "dispute_invoice", "invoice_matches"),
    # state reasons
    ("buyer", "pr-03", "order", "not_approved"),
    ("accounts_payable", "pr-23", "pay", "already_paid"),
    ("buyer", "pr-26", "cancel", "request_cancelled"),
]


@pytest.mark.parametrize(("role", "key", "operation", "reason"), CASES)
def test_each_rule_over_rest(
    api: Api, procurement: ProcurementDemo, role: str, key: str, operation: str, reason: str | None
) -> None:
    available, unavailable = affordances(detail(api, role, procurement, key))
    if reason is None:
        assert operation in available
        assert operation not in unavailable
    else:
        assert operation not in available
        assert unavailable[operation] == reason


def test_each_trap_applies_to_exactly_one_demo_request(
    api: Api, procurement: ProcurementDemo
) -> None:
    roles = {
        "expedite": "buyer",
        "insure": "buyer",
        "file_claim": "receiving_clerk",
        "recall": "receiving_clerk",
        "dispute_invoice": "accounts_payable",
    }
    for trap, role in roles.items():
        body = api(role).get("/api/purchase-requests/?page_size=200").json()
        where = [
            r["title"].split(":")[0].removeprefix("Demo request ")
            for r in body["results"]
            if trap in affordances(r)[0]
        ]
        assert len(where) == 1, (trap, where)


def test_the_same_approve_differs_across_submitted_requests(
    api: Api, procurement: ProcurementDemo
) -> None:
    body = api("approver").get("/api/purchase-requests/?status=submitted").json()
    outcome = {}
    for result in body["results"]:
        available, unavailable = affordances(result)
        key = result["title"].split(":")[0].removeprefix("Demo request ")
        outcome[key] = "approve" if "approve" in available else unavailable["approve"]
    assert outcome == {
        "pr-03": "approve",
        "pr-04": "over_approval_limit",
        "pr-05": "own_request",
        "pr-06": "supplier_blocked",
        "pr-07": "budget_exhausted",
        "pr-08": "approve",
        "pr-09": "approve",
        "pr-10": "over_approval_limit",
    }


def test_unblocking_the_supplier_makes_approve_available(
    api: Api, procurement: ProcurementDemo
) -> None:
    Supplier.objects.filter(name="Globex").update(blocked=False)
    available, _ = affordances(detail(api, "senior_approver", procurement, "pr-06"))
    assert "approve" in available


# --- narrowed constraints, per request and per user ----------------------------------


def constraint(body: dict[str, Any], operation: str) -> dict[str, Any]:
    (entry,) = [a for a in body["affordances"] if a["name"] == operation + SUFFIX]
    return entry["constraints"]


def test_delivery_dates_follow_the_suppliers_lead_time(
    api: Api, procurement: ProcurementDemo
) -> None:
    from procurement.rules import delivery_dates

    request = procurement.request("pr-11")
    dates = constraint(detail(api, "buyer", procurement, "pr-11"), "order")
    assert dates == {"properties": {"deliveryDate": {"enum": delivery_dates(request)}}}
    assert len(dates["properties"]["deliveryDate"]["enum"]) == 10


def test_receipt_is_at_most_the_ordered_quantity(api: Api, procurement: ProcurementDemo) -> None:
    body = detail(api, "receiving_clerk", procurement, "pr-16")
    assert constraint(body, "receive") == {"properties": {"quantity": {"maximum": 40}}}


@pytest.mark.parametrize(
    ("key", "methods"),
    [("pr-20", None), ("pr-22", ["bank_transfer", "cheque"])],
)
def test_payment_methods_depend_on_the_amount(
    api: Api, procurement: ProcurementDemo, key: str, methods: list[str] | None
) -> None:
    narrowed = constraint(detail(api, "accounts_payable", procurement, key), "pay")
    if methods is None:
        assert narrowed == {}  # 500: card, cheque and bank transfer
    else:
        assert narrowed == {"properties": {"paymentMethod": {"enum": methods}}}


def create(api: Api, role: str, cost_center: str) -> Any:
    return api(role).post(
        "/api/purchase-requests/",
        {
            "title": "Chairs",
            "costCenter": cost_center,
            "supplier": "Acme Office",
            "quantity": 2,
            "unitPrice": "50.00",
            "neededBy": "2030-01-31",
        },
        format="json",
    )


def test_requesters_charge_only_their_cost_centers(api: Api, procurement: ProcurementDemo) -> None:
    refused = create(api, "remy", "FAC")  # rita's, not remy's
    assert refused.status_code == 400
    assert refused.json()["code"] == "validation_error"
    assert set(refused.json()["errors"]) == {"costCenter"}
    made = create(api, "remy", "OPS")
    assert made.status_code == 201, made.content
    assert (made.json()["status"], made.json()["amount"]) == ("draft", "100.00")
    # Procurement staff charge any cost center.
    assert create(api, "approver", "FAC").status_code == 201
