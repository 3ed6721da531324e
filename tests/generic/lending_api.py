"""The loans wired as a project would (REST, OpenAPI, MCP), with a django-filter
``FilterSet`` of every kind the app maps to JSON Schema; for tests/test_filter_types.py.
Loaded as the URLconf after ``generic.Loan`` is registered (``importlib.reload``)."""

from __future__ import annotations

import django_filters
from django.urls import include, path
from rest_framework import serializers

from affordances.mcp import McpView
from affordances.rest import (
    AffordancesMixin,
    ResourceRouter,
    ResourceUrlField,
    ResourceViewSet,
    SchemaView,
)
from tests.generic.lending import Book, Hold, Loan


class LoanSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Loan
        fields = ["id", "url", "book", "due", "fine", "renewed", "kind", "status", "version"]
        read_only_fields = fields


class HoldSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Hold
        fields = ["id", "url", "status", "version"]
        read_only_fields = fields


class LoanFilter(django_filters.FilterSet):
    book = django_filters.ModelChoiceFilter(queryset=Book.objects.all())
    due = django_filters.DateFilter()
    fine_above = django_filters.NumberFilter(field_name="fine", lookup_expr="gt")
    renewed = django_filters.BooleanFilter()
    kind = django_filters.ChoiceFilter(choices=[("short", "Short"), ("long", "Long")])
    book_id = django_filters.NumberFilter(field_name="book")

    class Meta:
        model = Loan
        fields: list[str] = []


class LoanViewSet(ResourceViewSet):
    model = Loan


router = ResourceRouter()
router.register("loans", LoanViewSet)

urlpatterns = [
    path("api/schema/", SchemaView.as_view(), name="schema"),
    # A project that wants its document public says so where it mounts it.
    path("api/public-schema/", SchemaView.as_view(public=True), name="public-schema"),
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Loan": {
        "SERIALIZER": "tests.generic.lending_api.LoanSerializer",
        "FILTERSET": "tests.generic.lending_api.LoanFilter",
    },
}

# Refused by the system check affordances.E027 (tests/test_on_error.py).
HOLD_REGISTRATION = {"SERIALIZER": "tests.generic.lending_api.HoldSerializer"}
