"""Reads of orders, scoped to what a user may see."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from orders.models import Order
from orders.rules import is_customer


def order_visible_queryset(user: Any) -> QuerySet[Order]:
    """Staff roles see every order; customers see only their own; anonymous nothing."""
    orders = Order.objects.select_related("customer")
    if not getattr(user, "is_authenticated", False):
        return orders.none()
    if is_customer(user):
        return orders.filter(customer=user)
    return orders
