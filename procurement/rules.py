"""Policy of a purchase request that no status reveals: conditions, guards, constraints.

Each rule carries the machine reason reported when it fails (docs/demo.md#procurement). Two requests
in
the same state routinely differ in what applies: who asks, how much, which cost center
and supplier, what was received and invoiced.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from affordances import condition, guard

if TYPE_CHECKING:
    from procurement.models import PurchaseRequest

APPROVER_LIMIT = Decimal("5000.00")
SENIOR_APPROVER_LIMIT = Decimal("50000.00")
QUOTE_THRESHOLD = Decimal("10000.00")
INSURANCE_THRESHOLD = Decimal("25000.00")
INVOICE_TOLERANCE = Decimal("0.02")  # 2 % of the value received
# Payment methods and the largest amount each may settle (None: no limit).
PAYMENT_METHODS: dict[str, Decimal | None] = {
    "bank_transfer": None,
    "cheque": Decimal("10000.00"),
    "card": Decimal("1000.00"),
}
DELIVERY_DATE_CHOICES = 10  # working days offered from the supplier's lead time on

# A supplier's quote reference, wherever one is accepted (create, attach_quote) and
# whenever one must be on file (submit above the threshold): one rule.
QUOTE_REFERENCE_PATTERN = r"^Q-[0-9]{3,12}$"
QUOTE_REFERENCE_MESSAGE = "Use Q- and 3 to 12 digits."
QUOTE_REFERENCE_MAX_LENGTH = 30
# Units of one request, ordered or received.
MAX_QUANTITY = 100000

REJECT_REASONS = ("over_budget", "not_needed", "wrong_supplier", "missing_information")
CANCEL_REASONS = ("no_longer_needed", "supplier_unable", "duplicate")


def today() -> date:
    return timezone.localdate()


def is_quote_reference(value: str) -> bool:
    return re.fullmatch(QUOTE_REFERENCE_PATTERN, value or "") is not None


# --- conditions: facts of the request and the data it depends on -------------------


@condition("quote_missing")
def quote_on_file(request: PurchaseRequest) -> bool:
    """Above the threshold, a quote reference on file — one the quote rule accepts (not
    whatever text a request came to hold)."""
    return request.amount <= QUOTE_THRESHOLD or is_quote_reference(request.quote_reference)


@condition("supplier_blocked")
def supplier_not_blocked(request: PurchaseRequest) -> bool:
    return not request.supplier.blocked


@condition("budget_exhausted")
def budget_available(request: PurchaseRequest) -> bool:
    return request.cost_center.remaining >= request.amount


@condition("period_frozen")
def not_frozen(request: PurchaseRequest) -> bool:
    from procurement.reference import FreezePeriod

    return not FreezePeriod.covers(request.cost_center_id, today())


def invoice_within_tolerance(request: PurchaseRequest) -> bool:
    """The invoice matches the value received, within the tolerance."""
    if request.invoice_amount is None:
        return False
    expected = request.unit_price * request.received_quantity
    return abs(request.invoice_amount - expected) <= expected * INVOICE_TOLERANCE


@condition("invoice_mismatch")
def invoice_matches(request: PurchaseRequest) -> bool:
    return invoice_within_tolerance(request)


@condition("invoice_matches")
def invoice_disputable(request: PurchaseRequest) -> bool:
    return request.invoice_amount is not None and not invoice_within_tolerance(request)


@condition("no_express_service")
def supplier_offers_express(request: PurchaseRequest) -> bool:
    return request.supplier.express_available


@condition("delivery_on_time")
def delivery_late(request: PurchaseRequest) -> bool:
    return request.delivery_date is not None and request.delivery_date > request.needed_by


@condition("already_expedited")
def not_expedited(request: PurchaseRequest) -> bool:
    return not request.expedited


@condition("below_insurance_threshold")
def insurable_value(request: PurchaseRequest) -> bool:
    return request.amount >= INSURANCE_THRESHOLD


@condition("already_insured")
def not_insured(request: PurchaseRequest) -> bool:
    return not request.insured


@condition("nothing_missing")
def short_delivery(request: PurchaseRequest) -> bool:
    return request.received_quantity < request.quantity


@condition("claim_already_filed")
def no_claim_yet(request: PurchaseRequest) -> bool:
    return not request.claim


@condition("no_recall_notice")
def supplier_recall_open(request: PurchaseRequest) -> bool:
    return bool(request.supplier.recall_notice)


@condition("already_recalled")
def not_recalled(request: PurchaseRequest) -> bool:
    return not request.recalled


# --- guards: who the caller is ------------------------------------------------------


@guard("not_requester")
def is_requester(request: PurchaseRequest, user: Any) -> bool:
    return request.requester_id == user.pk


@guard("own_request")
def four_eyes(request: PurchaseRequest, user: Any) -> bool:
    """Nobody decides on their own request."""
    return request.requester_id != user.pk


def approval_limit(user: Any) -> Decimal:
    if user.has_perm("procurement.approve_large_purchase_request"):
        return SENIOR_APPROVER_LIMIT
    return APPROVER_LIMIT


@guard("over_approval_limit")
def within_approval_limit(request: PurchaseRequest, user: Any) -> bool:
    return request.amount <= approval_limit(user)


# --- constraints: inputs narrowed per request and per user ---------------------------


def delivery_dates(request: PurchaseRequest) -> list[str]:
    """Working days from the supplier's lead time on: what the supplier can promise."""
    day = today() + timedelta(days=request.supplier.lead_time_days)
    offered: list[str] = []
    while len(offered) < DELIVERY_DATE_CHOICES:
        if day.weekday() < 5:
            offered.append(day.isoformat())
        day += timedelta(days=1)
    return offered


def order_constraints(request: PurchaseRequest, user: Any) -> dict[str, Any]:
    return {"properties": {"deliveryDate": {"enum": delivery_dates(request)}}}


def receive_constraints(request: PurchaseRequest, user: Any) -> dict[str, Any]:
    """A receipt never exceeds what was ordered; less is a partial delivery."""
    return {"properties": {"quantity": {"maximum": request.quantity}}}


def payment_methods(amount: Decimal) -> list[str]:
    return [m for m, limit in PAYMENT_METHODS.items() if limit is None or amount <= limit]


def pay_constraints(request: PurchaseRequest, user: Any) -> dict[str, Any]:
    amount = request.invoice_amount if request.invoice_amount is not None else request.amount
    allowed = payment_methods(amount)
    if allowed == list(PAYMENT_METHODS):
        return {}
    return {"properties": {"paymentMethod": {"enum": allowed}}}


def member_cost_centers(user: Any) -> list[str]:
    from procurement.reference import CostCenter

    return list(CostCenter.objects.filter(members=user).values_list("code", flat=True))


def create_constraints(request: None, user: Any) -> dict[str, Any]:
    """Requesters charge only the cost centers they belong to; procurement staff any."""
    if user.has_perm("procurement.view_purchaserequest"):
        return {}
    if not user.is_authenticated:  # the system check's anonymous probe: a member of none
        return {"properties": {"costCenter": {"enum": []}}}
    return {"properties": {"costCenter": {"enum": member_cost_centers(user)}}}
