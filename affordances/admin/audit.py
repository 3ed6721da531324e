from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from affordances.admin.refusals import MalformedRequestRefusalMixin
from affordances.models import AuditRecord


@admin.register(AuditRecord)
class AuditRecordAdmin(MalformedRequestRefusalMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    """The audit log is evidence: readable, never editable."""

    list_display = [
        "created_at",
        "operation_name",
        "object_id",
        "source_state",
        "target_state",
        "username",
        "via",
        "version",
    ]
    list_filter = ["via", "operation_name", "content_type"]
    search_fields = ["object_id", "username", "operation"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
