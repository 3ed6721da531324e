"""The shop wired as a project would: every face of the library on ``generic.Purchase``.

REST (with filters), the OpenAPI document, simplejwt's token endpoints, the MCP
endpoint in each profile, an admin. Loaded as the URLconf after ``generic.Purchase`` is
registered (``tests.shop_data``; ``importlib.reload`` makes the routes anew from the
catalog of the moment).
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.contrib import admin
from django.db.models import QuerySet
from django.urls import include, path
from rest_framework import serializers
from rest_framework_simplejwt.views import TokenObtainPairView, TokenRefreshView

from affordances.admin import ANY_STATE, AffordanceAdminMixin
from affordances.admin.audit import AuditRecordAdmin
from affordances.mcp import COMPACT, FORMS, HYBRID, STATIC, McpView
from affordances.models import AuditRecord
from affordances.rest import (
    AffordancesMixin,
    ResourceRouter,
    ResourceUrlField,
    ResourceViewSet,
    SchemaView,
)
from tests.generic.shop import Purchase, Status, is_customer


def visible_purchases(user: Any) -> QuerySet[Purchase]:
    """Staff see every purchase, customers their own, anonymous callers none."""
    purchases = Purchase.objects.all()
    if not getattr(user, "is_authenticated", False):
        return purchases.none()
    if is_customer(user):
        return purchases.filter(customer=user.get_username())
    return purchases


class PurchaseSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()
    paymentStatus = serializers.CharField(source="payment_status", read_only=True)
    trackingNumber = serializers.CharField(
        source="tracking_number", read_only=True, allow_null=True
    )
    deliveredAt = serializers.DateTimeField(source="delivered_at", read_only=True, allow_null=True)

    class Meta:
        model = Purchase
        fields = ["id", "url", "customer", "description", "status", "paymentStatus", "total"]
        fields += ["trackingNumber", "deliveredAt", "version"]
        read_only_fields = fields


class PurchaseFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=Status.choices)
    customer = django_filters.CharFilter()

    class Meta:
        model = Purchase
        fields = ["status", "customer"]


class PurchaseViewSet(ResourceViewSet):
    model = Purchase


class PurchaseAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    list_display = ["id", "customer", "status", "total", "version"]
    list_filter = ["status"]
    search_fields = ["id", "customer", "tracking_number"]
    editable_fields = {ANY_STATE: ["description"]}


site = admin.AdminSite(name="shop_admin")
site.register(Purchase, PurchaseAdmin)
site.register(AuditRecord, AuditRecordAdmin)

router = ResourceRouter(trailing_slash=True)
router.register("purchases", PurchaseViewSet)

urlpatterns = [
    path("admin/", site.urls),
    path("api/token/", TokenObtainPairView.as_view(), name="token_obtain_pair"),
    path("api/token/refresh/", TokenRefreshView.as_view(), name="token_refresh"),
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/", include(router.urls)),
    path("api-auth/", include("rest_framework.urls")),
    path("mcp", McpView.as_view(profile=HYBRID), name="mcp"),
    path("mcp/static", McpView.as_view(profile=STATIC), name="mcp-static"),
    path("mcp/compact", McpView.as_view(profile=COMPACT), name="mcp-compact"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {
    "SERIALIZER": "tests.generic.shop_api.PurchaseSerializer",
    "QUERYSET": "tests.generic.shop_api.visible_purchases",
    "FILTERSET": "tests.generic.shop_api.PurchaseFilter",
    "ORDERING": ["pk"],
    "PAGE_SIZE": 50,
    "MAX_PAGE_SIZE": 200,
}
