"""The shelves and volumes wired as a project would (REST, MCP, admin), for
tests/test_any_project.py; reloaded once they are registered."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.shelves import Shelf, Tote, Volume


def shelves_visible_to(user: Any) -> QuerySet[Shelf]:
    if user.is_superuser:
        return Shelf.objects.all()
    return Shelf.objects.filter(room=user.get_username())


class ShelfSerializer(AffordancesMixin, serializers.ModelSerializer):  # type: ignore[type-arg]
    url = ResourceUrlField()

    class Meta:
        model = Shelf
        fields = ["id", "url", "code", "state", "version"]
        read_only_fields = fields


class VolumeSerializer(AffordancesMixin, serializers.ModelSerializer):  # type: ignore[type-arg]
    url = ResourceUrlField()

    class Meta:
        model = Volume
        fields = ["id", "url", "title", "status", "shelf", "due", "approved_amount", "version"]
        read_only_fields = fields


class ToteSerializer(AffordancesMixin, serializers.ModelSerializer):  # type: ignore[type-arg]
    url = ResourceUrlField()

    class Meta:
        model = Tote
        fields = ["id", "url", "state", "version"]
        read_only_fields = fields


class ShelfViewSet(ResourceViewSet):
    model = Shelf


class VolumeViewSet(ResourceViewSet):
    model = Volume


class ToteViewSet(ResourceViewSet):
    model = Tote


class VolumeAdmin(AffordanceAdminMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    pass


site = admin.AdminSite(name="shelves_admin")
site.register(Volume, VolumeAdmin)

router = ResourceRouter()
router.register("shelves", ShelfViewSet)
router.register("volumes", VolumeViewSet)
router.register("totes", ToteViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("shelves-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Shelf": {
        "SERIALIZER": "tests.generic.shelves_api.ShelfSerializer",
        "QUERYSET": "tests.generic.shelves_api.shelves_visible_to",
    },
    "generic.Volume": {"SERIALIZER": "tests.generic.shelves_api.VolumeSerializer"},
}
# Only for the check of conditions and guards that are not callable.
TOTE = {"generic.Tote": {"SERIALIZER": "tests.generic.shelves_api.ToteSerializer"}}
