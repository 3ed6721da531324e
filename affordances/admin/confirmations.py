"""The admin's second step before an operation that asks the person first
(docs/protocol.md#confirmations): a confirmation page like Django's delete confirmation.

The operation's form posts its arguments; instead of running, the admin previews the run
(every check and the transition, rolled back: :func:`affordances.execution.perform` with
``preview=True``) and shows the consequence and the change. "Yes, I'm sure" posts the
same arguments again with the version the preview held for, so a change meanwhile is
``stale_version``; "No, take me back" is a link: nothing is posted, nothing runs.
A bulk action does the same for its selection, listing each object's would-be change or
the reason it would be refused, before anything runs.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import helpers
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from affordances.admin.live import notice_context
from affordances.confirmation import consequence_text, state_change_text
from affordances.execution import perform
from affordances.models import Interface
from affordances.operations import Operation
from affordances.problems import Problem

__all__ = [
    "CONFIRMED",
    "bulk_confirmation_page",
    "confirmation_page",
    "confirmed",
    "preview_in_admin",
]

# The field "Yes, I'm sure" posts; without it an operation that asks first only previews.
CONFIRMED = "confirmed"
CONFIRMATION_TEMPLATE = "affordances/admin/operation_confirmation.html"
BULK_CONFIRMATION_TEMPLATE = "affordances/admin/bulk_confirmation.html"


def confirmed(request: HttpRequest) -> bool:
    return request.POST.get(CONFIRMED) == "yes"


def preview_in_admin(
    request: HttpRequest, operation: Operation, obj: Model, arguments: dict[str, Any]
) -> dict[str, Any]:
    """The preview of the run the form asks for; raises :class:`Problem` as the run would."""
    return perform(
        operation=operation,
        pk=obj.pk,
        user=request.user,
        arguments=dict(arguments),
        via=Interface.ADMIN,
        represent=lambda instance: {"id": instance.pk},
        request=request,
        preview=True,
    ).body


def confirmation_page(
    modeladmin: Any,
    request: HttpRequest,
    obj: Model,
    operation: Operation,
    arguments: dict[str, Any],
    preview: dict[str, Any],
    change_url: str,
) -> HttpResponse:
    posted = {name: value for name, value in arguments.items() if name != "expectedVersion"}
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.model._meta,
        "original": obj,
        "operation": operation,
        "title": "Are you sure?",
        "consequence": consequence_text(operation, obj),
        "change": state_change_text(preview["stateChange"]),
        "version": preview["validForVersion"],
        "arguments": sorted(posted.items()),
        "confirmed_field": CONFIRMED,
        "change_url": change_url,
        **notice_context(modeladmin, request, obj, preview["validForVersion"], form=True),
    }
    return TemplateResponse(request, CONFIRMATION_TEMPLATE, context)


def bulk_confirmation_page(
    modeladmin: Any,
    request: HttpRequest,
    operation: Operation,
    queryset: QuerySet[Any],
    arguments: dict[str, Any],
    changelist_url: str,
) -> HttpResponse:
    """Each selected object's preview: what would change, or why it would be refused."""
    rows = []
    for obj in queryset.order_by("pk"):
        try:
            preview = preview_in_admin(request, operation, obj, arguments)
        except Problem as problem:
            refusal = problem.reason or problem.detail
            if problem.errors:
                refusal = "; ".join(
                    f"{field}: {' '.join(errors)}" for field, errors in problem.errors.items()
                )
            rows.append({"obj": obj, "refused": refusal, "change": ""})
        else:
            change = state_change_text(preview["stateChange"])
            rows.append({"obj": obj, "refused": "", "change": change})
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.model._meta,
        "operation": operation,
        "title": "Are you sure?",
        "rows": rows,
        "runs": sum(1 for row in rows if not row["refused"]),
        "arguments": sorted(arguments.items()),
        "action_name": f"operation_{operation.name}",
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "confirmed_field": CONFIRMED,
        "changelist_url": changelist_url,
    }
    return TemplateResponse(request, BULK_CONFIRMATION_TEMPLATE, context)
