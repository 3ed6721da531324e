from __future__ import annotations

from django.contrib import admin

from affordances.admin import AffordanceAdminMixin
from procurement.models import CostCenter, FreezePeriod, PurchaseRequest, Supplier


@admin.register(PurchaseRequest)
class PurchaseRequestAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    list_display = ["id", "title", "requester", "status", "cost_center", "amount", "version"]
    list_filter = ["status", "cost_center", ("requester", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["requester", "cost_center", "supplier"]
    search_fields = ["id", "title", "requester__username", "po_number", "invoice_number"]
    # The state only changes through operations; the version only through the execution
    # path; the amount is the quantity times the unit price.
    readonly_fields = ["status", "version", "amount", "created_at", "updated_at"]


@admin.register(CostCenter)
class CostCenterAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "budget", "committed"]
    # Committed budget moves only under the row lock of approvals and cancellations.
    readonly_fields = ["committed"]
    filter_horizontal = ["members"]


@admin.register(Supplier)
class SupplierAdmin(admin.ModelAdmin):
    list_display = ["name", "blocked", "lead_time_days", "express_available", "recall_notice"]
    list_filter = ["blocked"]


@admin.register(FreezePeriod)
class FreezePeriodAdmin(admin.ModelAdmin):
    list_display = ["starts_on", "ends_on", "cost_center", "note"]
