"""The adversarial review's attacks, aimed at purchase requests.

Hidden payment routes read as missing ones for every method, ``Accept`` and ``format``;
a requester cannot read or act on a colleague's request; inputs cannot smuggle in a
state, a budget or someone else's name; money spellings are refused as for orders.
Each test asserts the database is as it was when the attack fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from demo_tests.conftest import ProcurementDemo
from procurement.models import CostCenter, PurchaseRequest
from tests.security.attacks import request, variants, wire


def database_state() -> tuple[Any, ...]:
    requests = tuple(
        PurchaseRequest.objects.order_by("pk").values_list(
            "pk", "status", "version", "amount", "requester_id", "invoice_amount"
        )
    )
    budgets = tuple(CostCenter.objects.order_by("pk").values_list("pk", "committed", "budget"))
    return requests, budgets, AuditRecord.objects.count()


@pytest.fixture
def unchanged(procurement: ProcurementDemo) -> Iterator[ProcurementDemo]:
    before = database_state()
    yield procurement
    assert database_state() == before


def bearer(procurement: ProcurementDemo, role: str) -> Client:
    token = AccessToken.for_user(procurement.users[role])
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.mark.parametrize(
    ("role", "verb", "key"),
    [
        ("auditor", "pay", "pr-20"),
        ("rita", "pay", "pr-21"),  # her own invoiced request
        ("buyer", "pay", "pr-20"),
        ("rita", "approve", "pr-03"),  # her own submitted request
        ("receiving_clerk", "order", "pr-11"),
    ],
)
def test_a_hidden_procurement_route_is_byte_identical_to_a_missing_one(
    unchanged: ProcurementDemo, role: str, verb: str, key: str
) -> None:
    client = bearer(unchanged, role)
    pk = unchanged.request(key).pk
    for method, url, extra in variants(f"/api/purchase-requests/{pk}/{verb}/"):
        hidden = request(client, method, url, **extra)
        missing = request(client, method, url.replace(f"/{verb}/", f"/{verb}x/"), **extra)
        assert wire(hidden) == wire(missing), (method, url, extra)
        assert hidden.status_code == 404


def test_a_colleagues_request_is_404_exactly_as_a_missing_one(
    unchanged: ProcurementDemo,
) -> None:
    client = bearer(unchanged, "remy")
    ritas = unchanged.request("pr-01").pk
    for suffix in ("", "submit/", "withdraw/"):
        method = "GET" if not suffix else "POST"
        seen = request(client, method, f"/api/purchase-requests/{ritas}/{suffix}")
        missing = request(client, method, f"/api/purchase-requests/99999999/{suffix}")
        assert wire(seen) == wire(missing)
        assert seen.status_code == 404


@pytest.mark.parametrize(
    "smuggled",
    [
        {"status": "paid"},
        {"requester": "remy"},
        {"amount": "1.00"},
        {"committed": "0"},
        {"approvedBy": "senior_approver"},
    ],
)
def test_an_operation_takes_no_argument_it_does_not_declare(
    unchanged: ProcurementDemo, smuggled: dict[str, Any]
) -> None:
    client = bearer(unchanged, "approver")
    pk = unchanged.request("pr-03").pk
    response = client.post(
        f"/api/purchase-requests/{pk}/approve/", smuggled, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert set(response.json()["errors"]) == set(smuggled)


def test_creating_cannot_choose_the_state_or_the_requester(
    procurement: ProcurementDemo,
) -> None:
    client = bearer(procurement, "rita")
    body = {
        "title": "Chairs",
        "costCenter": "IT",
        "supplier": "Acme Office",
        "quantity": 1,
        "unitPrice": "10.00",
        "neededBy": "2030-01-01",
    }
    for extra in ({"status": "approved"}, {"requester": "remy"}, {"amount": "0.01"}):
        refused = client.post("/api/purchase-requests/", {**body, **extra},
                              content_type="application/json")  # fmt: skip
        assert refused.status_code == 400, extra
    made = client.post("/api/purchase-requests/", body, content_type="application/json")
    assert made.status_code == 201
    assert (made.json()["status"], made.json()["requester"]) == ("draft", "rita")


@pytest.mark.parametrize(
    "amount", ["1e3", "1_000", "\uff11\uff10\uff10\uff10", " 1000", "NaN", "Infinity"]
)
def test_unusual_spellings_of_an_invoice_amount_are_refused(
    unchanged: ProcurementDemo, amount: str
) -> None:
    client = bearer(unchanged, "accounts_payable")
    pk = unchanged.request("pr-19").pk
    response = client.post(
        f"/api/purchase-requests/{pk}/invoice/",
        {"invoiceNumber": "I-1", "amount": amount},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "amount" in response.json()["errors"]


def test_a_receipt_cannot_be_negative_or_above_the_order(unchanged: ProcurementDemo) -> None:
    client = bearer(unchanged, "receiving_clerk")
    pk = unchanged.request("pr-16").pk
    for quantity in (-1, 0, 41, 10**12, "40.5", True):
        response = client.post(
            f"/api/purchase-requests/{pk}/receive/", {"quantity": quantity},
            content_type="application/json",
        )  # fmt: skip
        assert response.status_code == 400, quantity
