from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from rest_framework import serializers

from affordances.admin import AffordanceAdminMixin, MalformedRequestRefusalMixin
from procurement.inputs import CreatePurchaseRequestInput
from procurement.models import CostCenter, FreezePeriod, PurchaseRequest, Status, Supplier


class PurchaseRequestForm(forms.ModelForm):
    """A draft's fields, held to the bounds of creating one (the create operation's input)."""

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for field in CreatePurchaseRequestInput().fields.values():
            name = field.source  # the model field's name
            relation = PurchaseRequest._meta.get_field(name).is_relation
            if name in self.fields and not relation and cleaned.get(name) is not None:
                try:
                    field.run_validation(cleaned[name])
                except serializers.ValidationError as exc:
                    self.add_error(name, [str(error) for error in exc.detail])
        return cleaned


@admin.register(PurchaseRequest)
class PurchaseRequestAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    form = PurchaseRequestForm
    list_display = ["id", "title", "requester", "status", "cost_center", "amount", "version"]
    list_filter = ["status", "cost_center", ("requester", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["requester", "cost_center", "supplier"]
    search_fields = ["id", "title", "requester__username", "po_number", "invoice_number"]
    # The state changes only through operations and the version only through the
    # execution path (the mixin keeps both read-only); the amount is the quantity times
    # the unit price.
    readonly_fields = ["amount", "created_at", "updated_at"]
    # Only a draft is edited, and only in what its requester could have chosen
    # otherwise: nothing is reserved yet, and submitting and approving check the amount,
    # quote, supplier and budget anew. The requester (four eyes), the cost center (its
    # members), the quote (attach_quote) and all that later operations record —
    # received quantity, invoice, payment, delivery — are never edited here.
    editable_fields = {Status.DRAFT: ["title", "supplier", "quantity", "unit_price", "needed_by"]}
    # Deleted only in states that never held budget.
    deletable_states = [Status.DRAFT, Status.WITHDRAWN, Status.REJECTED]


class CostCenterForm(forms.ModelForm):
    def clean_budget(self) -> Any:
        budget = self.cleaned_data["budget"]
        if self.instance.pk is not None and budget is not None:
            committed = CostCenter.objects.get(pk=self.instance.pk).committed
            if budget < committed:
                raise forms.ValidationError(
                    f"At least the committed {committed}: cancel requests to free budget."
                )
        return budget


@admin.register(CostCenter)
class CostCenterAdmin(MalformedRequestRefusalMixin, admin.ModelAdmin):
    form = CostCenterForm
    list_display = ["code", "name", "budget", "committed"]
    # Committed budget moves only under the row lock of approvals and cancellations.
    readonly_fields = ["committed"]
    filter_horizontal = ["members"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        # Write only the edited columns: a full save would write back the committed
        # budget as it was read, undoing a reservation made meanwhile.
        concrete = {field.name for field in CostCenter._meta.concrete_fields}
        fields = [name for name in form.changed_data if name in concrete]
        if fields:
            obj.save(update_fields=fields)


@admin.register(Supplier)
class SupplierAdmin(MalformedRequestRefusalMixin, admin.ModelAdmin):
    list_display = ["name", "blocked", "lead_time_days", "express_available", "recall_notice"]
    list_filter = ["blocked"]


@admin.register(FreezePeriod)
class FreezePeriodAdmin(MalformedRequestRefusalMixin, admin.ModelAdmin):
    list_display = ["starts_on", "ends_on", "cost_center", "note"]
