"""The expense app wired for tests/test_object_permissions.py: REST, MCP and an admin.

Loaded as the URLconf after ``generic.Expense`` is registered (``importlib.reload``
makes the routes anew from the catalog of the moment).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.models import Expense


class ExpenseSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Expense
        fields = ["id", "url", "state", "owner", "reviewer", "amount", "version"]
        read_only_fields = fields


class ExpenseViewSet(ResourceViewSet):
    model = Expense


class ExpenseAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    pass


site = admin.AdminSite(name="expenses_admin")
site.register(Expense, ExpenseAdmin)

router = ResourceRouter()
router.register("expenses", ExpenseViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {"SERIALIZER": "tests.generic.expenses.ExpenseSerializer", "PAGE_SIZE": 50}
