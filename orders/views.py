"""The REST face of orders: everything comes from the registration in settings."""

from __future__ import annotations

from affordances.rest import ResourceViewSet
from orders.models import Order


class OrderViewSet(ResourceViewSet):
    """Orders visible to the caller, each with the operations that apply to it now."""

    model = Order
