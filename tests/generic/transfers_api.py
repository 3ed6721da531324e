"""The crates and branches wired as a project would (REST, MCP, admin), for
tests/test_input_context.py; reloaded once they are registered."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.transfers import Branch, Crate


def branches_visible_to(user: Any) -> QuerySet[Branch]:
    if user.is_superuser:
        return Branch.objects.all()
    return Branch.objects.filter(staff=user.get_username())


class BranchSerializer(AffordancesMixin, serializers.ModelSerializer):  # type: ignore[type-arg]
    url = ResourceUrlField()

    class Meta:
        model = Branch
        fields = ["id", "url", "code", "state", "version"]
        read_only_fields = fields


class CrateSerializer(AffordancesMixin, serializers.ModelSerializer):  # type: ignore[type-arg]
    url = ResourceUrlField()

    class Meta:
        model = Crate
        fields = ["id", "url", "status", "origin", "destination", "received_by", "version"]
        read_only_fields = fields


class BranchViewSet(ResourceViewSet):
    model = Branch


class CrateViewSet(ResourceViewSet):
    model = Crate


class CrateAdmin(AffordanceAdminMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    pass


site = admin.AdminSite(name="transfers_admin")
site.register(Crate, CrateAdmin)

router = ResourceRouter()
router.register("branches", BranchViewSet)
router.register("crates", CrateViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("transfers-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Branch": {
        "SERIALIZER": "tests.generic.transfers_api.BranchSerializer",
        "QUERYSET": "tests.generic.transfers_api.branches_visible_to",
    },
    "generic.Crate": {"SERIALIZER": "tests.generic.transfers_api.CrateSerializer"},
}
