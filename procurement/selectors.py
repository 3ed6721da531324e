"""Reads of purchase requests, scoped to what a user may see."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from procurement.models import PurchaseRequest


def purchase_request_visible_queryset(user: Any) -> QuerySet[PurchaseRequest]:
    """Procurement roles and auditors see every request; requesters only their own."""
    requests = PurchaseRequest.objects.select_related("requester", "cost_center", "supplier")
    if not getattr(user, "is_authenticated", False):
        return requests.none()
    if user.has_perm("procurement.view_purchaserequest"):
        return requests
    return requests.filter(requester=user)
