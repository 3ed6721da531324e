"""A cost center's committed budget, changed only under its row lock.

Approving checks the remaining budget before the transition (a condition, so the
affordance says ``budget_exhausted``), but that read is not locked: two approvals of
different requests on the same cost center could both pass it. The reservation below
re-reads the cost center under ``SELECT … FOR UPDATE`` inside the run's transaction, so
the second approval waits for the first to commit and then sees what is really left.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.db.models import F

from affordances import Problem
from procurement.reference import CostCenter

if TYPE_CHECKING:
    from procurement.models import PurchaseRequest


def _locked(cost_center_id: int) -> CostCenter:
    return CostCenter.objects.select_for_update().get(pk=cost_center_id)


def reserve(request: PurchaseRequest, *, operation: str) -> None:
    """Commit the request's amount, or refuse as the condition would have."""
    cost_center = _locked(request.cost_center_id)
    if cost_center.remaining < request.amount:
        raise Problem.not_available(operation=operation, reason="budget_exhausted")
    _add(cost_center, request.amount)
    request.cost_center = cost_center


def release(request: PurchaseRequest) -> None:
    """Give the request's amount back (it will not be bought after all)."""
    _add(_locked(request.cost_center_id), -request.amount)


def settle(request: PurchaseRequest, paid: Decimal) -> None:
    """Replace the reserved amount by what was really paid."""
    _add(_locked(request.cost_center_id), paid - request.amount)


def _add(cost_center: CostCenter, delta: Decimal) -> None:
    CostCenter.objects.filter(pk=cost_center.pk).update(committed=F("committed") + delta)
    cost_center.refresh_from_db(fields=["committed"])
