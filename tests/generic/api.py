"""The ticket app wired as a new project would, from the README alone.

A serializer, a viewset, the router, the MCP endpoint, an admin — and a registered
``QUERYSET`` that hides some tickets, so every face is seen to read through it. Tests
load this as the URLconf after registering ``generic.Ticket`` (``importlib.reload`` makes
the routes anew from the catalog of the moment).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.urls import include, path
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin
from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceUrlField, ResourceViewSet
from tests.generic.models import Ticket

# Tickets assigned to "secret" are seen by superusers only.
SECRET = "secret"


def visible_tickets(user: Any) -> QuerySet[Ticket]:
    tickets = Ticket.objects.all()
    if not getattr(user, "is_authenticated", False):
        return tickets.none()
    return tickets if user.is_superuser else tickets.exclude(assignee=SECRET)


class TicketSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Ticket
        fields = ["id", "url", "state", "assignee", "version"]
        read_only_fields = fields


class TicketViewSet(ResourceViewSet):
    model = Ticket


class TicketAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    # The state and the version are read-only without saying so; the assignee (what
    # closing a ticket checks) is assigned while the ticket is still being worked on.
    editable_fields = {"open": ["assignee"], "escalated": ["assignee"]}


site = admin.AdminSite(name="generic_admin")
site.register(Ticket, TicketAdmin)

router = ResourceRouter()
router.register("tickets", TicketViewSet)

# Mounted elsewhere than the demo, so nothing can lean on "/api/" or "/mcp".
urlpatterns = [
    path("v2/", include(router.urls)),
    path("agents/mcp", McpView.as_view(), name="mcp"),
    path("generic-admin/", site.urls),
]

handler404 = "affordances.rest.not_found_view"

REGISTRATION = {
    "SERIALIZER": "tests.generic.api.TicketSerializer",
    "QUERYSET": "tests.generic.api.visible_tickets",
    "PAGE_SIZE": 2,
    "MAX_PAGE_SIZE": 3,
}
