"""The claims wired as a project would (REST, HAL-FORMS, MCP, admin), their
registrations' ``QUERYSET`` taking ``(user, request)``; for tests/test_one_visibility.py.
Loaded as the URLconf after the claims are registered (``importlib.reload``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.claims import Claim, Policy

# What the request carries that the user does not: a stand-in for a project's host,
# tenant header or client certificate.
CLEARANCE_HEADER = "X-Clearance"


def _unsealed(objects: QuerySet[Any], user: Any, request: Any) -> QuerySet[Any]:
    """Sealed objects are hidden from every face's caller unless the request carries
    clearance; code that runs without a request (``perform()`` from a command) sees them."""
    if not getattr(user, "is_authenticated", False):
        return objects.none()
    if request is None or request.headers.get(CLEARANCE_HEADER) == "sealed":
        return objects
    return objects.exclude(sealed=True)


def visible_claims(user: Any, request: Any) -> QuerySet[Claim]:
    return _unsealed(Claim.objects.all(), user, request)


def visible_policies(user: Any, request: Any) -> QuerySet[Policy]:
    return _unsealed(Policy.objects.all(), user, request)


class ClaimSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Claim
        fields = ["id", "url", "policy", "state", "version"]
        read_only_fields = fields


class PolicySerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Policy
        fields = ["id", "url", "number", "state", "version"]
        read_only_fields = fields


class ClaimViewSet(ResourceViewSet):
    model = Claim


class PolicyViewSet(ResourceViewSet):
    model = Policy


class ClaimAdmin(AffordanceAdminMixin, admin.ModelAdmin):  # type: ignore[misc]
    # An open claim's policy may be corrected on its change form.
    editable_fields = {"open": ["policy"]}


site = admin.AdminSite(name="claims_admin")
site.register(Claim, ClaimAdmin)

router = ResourceRouter()
router.register("claims", ClaimViewSet)
router.register("policies", PolicyViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("claims-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATIONS = {
    "generic.Claim": {
        "SERIALIZER": "tests.generic.claims_api.ClaimSerializer",
        "QUERYSET": "tests.generic.claims_api.visible_claims",
    },
    "generic.Policy": {
        "SERIALIZER": "tests.generic.claims_api.PolicySerializer",
        "QUERYSET": "tests.generic.claims_api.visible_policies",
    },
}
