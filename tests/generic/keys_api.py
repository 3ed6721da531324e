"""The UUID- and text-keyed models wired as a project would (REST, MCP, admin), for
tests/test_key_types.py; reloaded once they are registered."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import FORMS, McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.keys import Locker, Voucher


class VoucherSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Voucher
        fields = ["id", "url", "phase", "version"]
        read_only_fields = fields


class LockerSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Locker
        fields = ["code", "url", "phase", "version"]
        read_only_fields = fields


class VoucherViewSet(ResourceViewSet):
    model = Voucher


class LockerViewSet(ResourceViewSet):
    model = Locker


class KeyedAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    pass


site = admin.AdminSite(name="keys_admin")
site.register(Voucher, KeyedAdmin)
site.register(Locker, KeyedAdmin)

router = ResourceRouter()
router.register("vouchers", VoucherViewSet)
router.register("lockers", LockerViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
    path("keys-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Voucher": {"SERIALIZER": "tests.generic.keys_api.VoucherSerializer"},
    "generic.Locker": {"SERIALIZER": "tests.generic.keys_api.LockerSerializer"},
}
