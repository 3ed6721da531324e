"""The REST face of purchase requests: everything comes from the registration in settings."""

from __future__ import annotations

from affordances.rest import ResourceViewSet
from procurement.models import PurchaseRequest


class PurchaseRequestViewSet(ResourceViewSet):
    """Purchase requests visible to the caller, each with the operations that apply now."""

    model = PurchaseRequest
