from __future__ import annotations

import django_filters

from orders.models import Order, OrderStatus


class OrderFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=OrderStatus.choices)
    customer = django_filters.CharFilter(field_name="customer__username")

    class Meta:
        model = Order
        fields = ["status", "customer"]
