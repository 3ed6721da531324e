"""The REST face of orders: reads here, actions generated from the catalog."""

from __future__ import annotations

from django.db.models import QuerySet
from rest_framework import viewsets

from affordances.views import TransitionActionsMixin
from orders.filters import OrderFilter
from orders.models import Order
from orders.selectors import order_visible_queryset
from orders.serializers import OrderSerializer


class OrderViewSet(TransitionActionsMixin, viewsets.ReadOnlyModelViewSet):
    """Orders visible to the caller, each with the operations that apply to it now."""

    queryset = Order.objects.all()
    serializer_class = OrderSerializer
    filterset_class = OrderFilter

    def get_queryset(self) -> QuerySet[Order]:
        return order_visible_queryset(self.request.user)
