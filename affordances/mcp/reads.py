"""The read operations over MCP: one object, or one page of objects, as REST serves them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.core.paginator import EmptyPage, Paginator
from django.urls import NoReverseMatch, reverse
from jsonschema import Draft202012Validator
from rest_framework.settings import api_settings

from affordances.mcp.context import Context
from affordances.operations import Operation
from affordances.problems import Problem
from affordances.resources import Resource

__all__ = ["is_item_read", "read", "schema_errors"]

_PAGING = ("page", "pageSize")


def schema_errors(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, list[str]]:
    """Arguments against an input schema, as ``validation_error`` lists them per field."""
    errors: dict[str, list[str]] = {}
    for error in Draft202012Validator(schema).iter_errors(arguments):
        instance = error.instance if isinstance(error.instance, dict) else {}
        if error.validator == "required":
            for name in error.validator_value:
                if name not in instance:
                    errors.setdefault(name, []).append("This field is required.")
        elif error.validator == "additionalProperties":
            known = set(error.schema.get("properties", {}))
            for name in instance:
                if name not in known:
                    errors.setdefault(str(name), []).append("Unknown argument.")
        else:
            name = str(error.absolute_path[0]) if error.absolute_path else "nonFieldErrors"
            errors.setdefault(name, []).append(error.message)
    return errors


def is_item_read(operation: Operation) -> bool:
    # A read bound to one object requires its id; a collection read does not.
    return operation.resource.id_argument in operation.input_schema.get("required", ())


def read(ctx: Context, operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """The body of a read tool; raises :class:`Problem` (validation_error, not_found)."""
    errors = schema_errors(operation.input_schema, arguments)
    if errors:
        raise Problem.validation(errors)
    resource = operation.resource
    if is_item_read(operation):
        return ctx.represent(ctx.visible(resource, arguments[resource.id_argument]))
    return _page(ctx, resource, arguments)


def _page(ctx: Context, resource: Resource, arguments: dict[str, Any]) -> dict[str, Any]:
    """``count``/``next``/``previous``/``results``, filtered and paged like the REST list."""
    queryset = resource.visible_queryset(ctx.user)
    filters = {name: value for name, value in arguments.items() if name not in _PAGING}
    if resource.filterset_class is not None:
        filterset = resource.filterset_class(data=filters, queryset=queryset, request=ctx.request)
        if not filterset.is_valid():
            raise Problem.validation(
                {
                    name: [str(message) for message in messages]
                    for name, messages in filterset.errors.items()
                }
            )
        queryset = filterset.qs
    if not queryset.ordered:
        queryset = queryset.order_by("pk")
    size = arguments.get("pageSize") or _default_page_size()
    paginator = Paginator(queryset, size)
    try:
        page = paginator.page(arguments.get("page", 1))
    except EmptyPage:
        raise Problem.not_found() from None
    # next/previous are the REST collection's own links, so both faces page alike.
    query = dict(filters)
    if "pageSize" in arguments:
        query["page_size"] = size
    return {
        "count": paginator.count,
        "next": _link(ctx, resource, query, page.next_page_number()) if page.has_next() else None,
        "previous": _link(ctx, resource, query, page.previous_page_number())
        if page.has_previous()
        else None,
        "results": ctx.represent_many(resource, page.object_list),
    }


def _default_page_size() -> int:
    # The REST list's own default, so an unpaged call returns the same first page.
    pagination = api_settings.DEFAULT_PAGINATION_CLASS
    return getattr(pagination, "page_size", None) or api_settings.PAGE_SIZE or 50


def _link(ctx: Context, resource: Resource, query: dict[str, Any], number: int) -> str | None:
    try:
        path = reverse(f"{resource.basename}-list")
    except NoReverseMatch:
        return None
    query = {**query, "page": number} if number > 1 else query
    return ctx.absolute(path) + (f"?{urlencode(query)}" if query else "")
