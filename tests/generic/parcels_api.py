"""The parcel wired as a project would (REST, OpenAPI, MCP, admin), for
tests/test_constraint_vocabulary.py. Loaded as the URLconf after ``generic.Parcel`` is
registered (``importlib.reload`` makes the routes anew from the catalog of the moment).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import (
    AffordancesMixin,
    ResourceRouter,
    ResourceUrlField,
    ResourceViewSet,
    SchemaView,
)
from tests.generic.parcels import Parcel


class ParcelSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Parcel
        fields = ["id", "url", "state", "service", "carrier", "weight", "pieces", "reference"]
        fields += ["version"]
        read_only_fields = fields


class ParcelViewSet(ResourceViewSet):
    model = Parcel


class ParcelAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    pass


site = admin.AdminSite(name="parcels_admin")
site.register(Parcel, ParcelAdmin)

router = ResourceRouter()
router.register("parcels", ParcelViewSet)

urlpatterns = [
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("parcels-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {"SERIALIZER": "tests.generic.parcels_api.ParcelSerializer"}
