from __future__ import annotations

from django.contrib import admin

from affordances.admin import AffordanceAdminMixin
from orders.models import Order


@admin.register(Order)
class OrderAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    list_display = ["id", "customer", "status", "payment_status", "total", "currency", "version"]
    list_filter = ["status", ("customer", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["customer"]
    search_fields = ["id", "customer__username", "tracking_number"]
    # The state only changes through operations; the version only through the execution path.
    readonly_fields = ["status", "version", "created_at", "updated_at"]
