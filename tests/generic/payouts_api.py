"""The payouts wired as a project would (REST and MCP), for
tests/test_role_prerequisites.py. Loaded as the URLconf after ``generic.Payout`` is
registered (``importlib.reload``)."""

from __future__ import annotations

from django.urls import include, path
from rest_framework import serializers

from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.payouts import Payout


class PayoutSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Payout
        fields = ["id", "url", "assignee", "state", "version"]
        read_only_fields = fields


class PayoutViewSet(ResourceViewSet):
    model = Payout


router = ResourceRouter()
router.register("payouts", PayoutViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {"SERIALIZER": "tests.generic.payouts_api.PayoutSerializer"}
