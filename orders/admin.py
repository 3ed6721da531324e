from __future__ import annotations

from django.contrib import admin

from orders.models import Order


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    list_display = ["id", "customer", "status", "payment_status", "total", "currency", "version"]
    list_filter = ["status", "customer"]
    list_select_related = ["customer"]
    search_fields = ["id", "customer__username", "tracking_number"]
    readonly_fields = ["status", "version", "created_at", "updated_at"]
