from __future__ import annotations

import django_filters

from procurement.models import PurchaseRequest, Status


class PurchaseRequestFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Status.choices)
    requester = django_filters.CharFilter(field_name="requester__username")
    costCenter = django_filters.CharFilter(field_name="cost_center__code")

    class Meta:
        model = PurchaseRequest
        fields = ["status", "requester", "costCenter"]
