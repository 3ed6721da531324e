"""The change list as a face of the catalog: a column of available operations, one bulk
action per operation, and the catalog page with the state diagrams.

Part of :class:`affordances.admin.mixins.AffordanceAdminMixin`; like it, it only
translates — every run is ``perform(via="admin")``, reported object by object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html_join

from affordances import reads
from affordances.admin.confirmations import bulk_confirmation_page, confirmed
from affordances.admin.diagrams import state_diagram
from affordances.admin.forms import admin_form, operation_form_class, posted_arguments
from affordances.admin.prose import reference_description
from affordances.catalog import get_catalog
from affordances.entries import Shape, lists_for
from affordances.execution import perform
from affordances.models import Interface
from affordances.operations import Operation
from affordances.problems import Problem

__all__ = ["ChangeListAffordancesMixin", "admin_represent", "run_in_admin"]


def admin_represent(instance: Model) -> dict[str, Any]:
    # The admin re-reads the object after a run; the body is only kept for idempotency.
    return {"id": instance.pk}


def run_in_admin(
    request: HttpRequest, operation: Operation, obj: Model, arguments: dict[str, Any]
) -> Model:
    """One run through the execution path as the admin's user; raises :class:`Problem`.

    Returns the object as it is after the run, read anew through the one read path —
    never ``refresh_from_db()``, which a protected FSM field refuses.
    """
    perform(
        operation=operation,
        pk=obj.pk,
        user=request.user,
        arguments=arguments,
        via=Interface.ADMIN,
        represent=admin_represent,
        request=request,
    )
    return reads.find(operation.resource, request.user, obj.pk, request=request)


class ChangeListAffordancesMixin:
    bulk_operation_template = "affordances/admin/bulk_operation.html"
    catalog_template = "affordances/admin/catalog.html"

    model: type[Model]
    admin_site: admin.AdminSite

    @property
    def media(self) -> forms.Media:
        """Django's admin media, and the app's stylesheet (the Actions panel's buttons, the
        change list's column): on every page the model admin renders."""
        css = forms.Media(css={"all": ["affordances/admin/affordances.css"]})
        return super().media + css  # type: ignore[misc, no-any-return]

    def _operations(self, user: Any) -> list[Operation]:
        return [op for op in get_catalog().transitions_for(self.model) if op.permits(user)]

    # -- change list -----------------------------------------------------------------

    def get_list_display(self, request: HttpRequest) -> Any:
        base = list(super().get_list_display(request))  # type: ignore[misc]
        # The request's entries (affordances.entries), worked out once for every row.
        cache: dict[str, Any] = {}

        def available_operations(obj: Model) -> str:
            lists = lists_for(cache, request, request.user, type(obj), Shape.FULL)
            titles = [entry["title"] for entry in lists(obj)[0]] if lists is not None else []
            return (
                format_html_join(
                    ", ", '<span class="affordance-title">{}</span>', ((title,) for title in titles)
                )
                or "—"
            )

        available_operations.short_description = "Available operations"  # type: ignore[attr-defined]
        # Beside the object's link (the first column), not after the project's columns: a
        # list wider than the page scrolls sideways, and the operations must not be what
        # scrolls out of sight (Django keeps foreign keys and dates on one line each).
        return [*base[:1], available_operations, *base[1:]]

    def get_actions(self, request: HttpRequest, action_location: Any = None) -> dict[str, Any]:
        """The admin's actions, and on the change list one bulk action per operation.

        Django 6.1 asks for the actions of one place (``action_location``: the change list
        or, new in 6.1, the change form) and deprecates overrides without the parameter;
        Django 5.2 has neither the parameter nor places. The operations are bulk actions
        over a selection: the change list's only. Django 6.1 describes an action with an
        ``Action`` (its tuples are deprecated), Django 5.2 with ``(function, name,
        description)``.
        """
        if action_location is None:  # Django 5.2, or a caller asking for the change list
            actions = dict(super().get_actions(request))  # type: ignore[misc]
        else:
            actions = dict(super().get_actions(request, action_location=action_location))  # type: ignore[misc]
            if action_location.name != "CHANGE_LIST":
                return actions
        make_action = getattr(admin.options, "Action", None)  # Django 6.1
        for operation in self._operations(request.user):
            name = f"operation_{operation.name}"
            run, description = self._bulk_action(operation), f"{operation.title} (selected)"
            actions[name] = (
                (run, name, description)
                if make_action is None
                else make_action(
                    func=run,
                    name=name,
                    description=description,
                    plural_description=description,
                    locations=[action_location or admin.options.ActionLocation.CHANGE_LIST],
                )
            )
        return actions

    def _bulk_action(self, operation: Operation) -> Callable[..., HttpResponse | None]:
        def run(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
            # One form for all selected objects: each is checked on its own when it runs.
            form_class = operation_form_class(operation.input_serializer, {}, versioned=False)
            if operation.input_serializer is not None and "apply" not in request.POST:
                return self._render_bulk_form(request, operation, queryset, form_class())
            arguments = posted_arguments(request.POST, form_class)
            if operation.confirmation_required and not confirmed(request):
                # Each object's preview, refusals listed, before anything runs.
                changelist = request.get_full_path()
                return bulk_confirmation_page(
                    self, request, operation, queryset, arguments, changelist
                )
            for obj in queryset.order_by("pk"):
                self._bulk_one(request, operation, obj, arguments)
            return None

        run.__name__ = f"operation_{operation.name}"
        return run

    def _bulk_one(
        self, request: HttpRequest, operation: Operation, obj: Model, arguments: dict[str, Any]
    ) -> None:
        try:
            obj = run_in_admin(request, operation, obj, arguments)
        except Problem as problem:
            detail = (
                problem.reason
                or "; ".join(
                    f"{field}: {' '.join(errors)}"
                    for field, errors in (problem.errors or {}).items()
                )
                or problem.code
            )
            self.message_user(  # type: ignore[attr-defined]
                request, f"{obj}: {operation.title} refused — {detail}", messages.WARNING
            )
            return
        state = operation.facts.field.get_state(obj)
        self.message_user(  # type: ignore[attr-defined]
            request, f"{obj}: {operation.title} done — now {state}.", messages.SUCCESS
        )

    def _render_bulk_form(
        self, request: HttpRequest, operation: Operation, queryset: QuerySet[Any], form: Any
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "operation": operation,
            "form": form,
            "adminform": admin_form(form),
            "objects": list(queryset.order_by("pk")),
            "action_name": f"operation_{operation.name}",
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "title": f"{operation.title}: {queryset.count()} selected",
        }
        return TemplateResponse(request, self.bulk_operation_template, context)

    # -- catalog page ----------------------------------------------------------------

    def catalog_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_or_change_permission(request):  # type: ignore[attr-defined]
            raise PermissionDenied
        catalog = get_catalog()
        operations = [op for op in catalog.for_model(self.model) if op.permits(request.user)]
        resource = catalog.resource_for(self.model)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Operations on {self.model._meta.verbose_name_plural}",
            "operations": [
                {
                    "operation": op,
                    "description": reference_description(op),
                    "input_schema": json.dumps(op.input_schema, indent=2, default=str),
                }
                for op in operations
            ],
            "diagrams": [
                state_diagram(resource, field, request.user) for field in resource.fsm_fields
            ]
            if resource
            else [],
        }
        return TemplateResponse(request, self.catalog_template, context)
