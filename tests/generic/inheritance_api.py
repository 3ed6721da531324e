"""The multi-table-inheritance child wired as a project would (REST, MCP, admin), for
tests/test_inherited_key.py; reloaded once it is registered."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.inheritance import Vehicle


class VehicleSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Vehicle
        fields = ["id", "url", "label", "phase", "version"]
        read_only_fields = fields


class VehicleViewSet(ResourceViewSet):
    model = Vehicle


class VehicleAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    pass


site = admin.AdminSite(name="inheritance_admin")
site.register(Vehicle, VehicleAdmin)

router = ResourceRouter()
router.register("vehicles", VehicleViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("inheritance-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Vehicle": {"SERIALIZER": "tests.generic.inheritance_api.VehicleSerializer"},
}
