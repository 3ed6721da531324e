"""The booking wired as a project would (REST, MCP, admin), for
tests/test_date_constraints.py. Loaded as the URLconf after ``generic.Booking`` is
registered (``importlib.reload`` makes the routes anew from the catalog of the moment).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.bookings import Booking


class BookingSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Booking
        fields = ["id", "url", "state", "fee", "opens", "closes", "day", "version"]
        read_only_fields = fields


class BookingViewSet(ResourceViewSet):
    model = Booking


class BookingAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    pass


site = admin.AdminSite(name="bookings_admin")
site.register(Booking, BookingAdmin)

router = ResourceRouter()
router.register("bookings", BookingViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("bookings-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {"SERIALIZER": "tests.generic.bookings_api.BookingSerializer"}
