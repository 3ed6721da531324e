from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from affordances.admin import ANY_STATE, AffordanceAdminMixin, MalformedRequestRefusalMixin
from orders.models import Order

# The demo project's users: Django's UserAdmin, refusing control characters like every
# other admin of the project (its search also answers the site's autocomplete, e.g. for
# an order's customer, and a NUL would reach PostgreSQL as a DataError).
admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class ProjectUserAdmin(MalformedRequestRefusalMixin, UserAdmin):  # type: ignore[type-arg]
    pass


@admin.register(Order)
class OrderAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    list_display = ["id", "customer", "status", "payment_status", "total", "currency", "version"]
    list_filter = ["status", ("customer", admin.RelatedOnlyFieldListFilter)]
    list_select_related = ["customer"]
    search_fields = ["id", "customer__username", "tracking_number"]
    # The state changes only through operations and the version only through the
    # execution path: the mixin keeps both read-only.
    readonly_fields = ["created_at", "updated_at"]
    # The description is a note no rule reads. The total (the supervisor's threshold,
    # the refund maximum), the payment status (confirming), the customer (whose order
    # it is), the tracking number and the delivery time (the refund window) are the
    # rules' facts, set at creation or by operations.
    editable_fields = {ANY_STATE: ["description"]}
