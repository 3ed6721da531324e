"""The read operations over MCP: one object, or one page of objects, through the core's
one read path, rendered as REST renders them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from affordances import reads, routes
from affordances.mcp.context import Context
from affordances.operations import Operation
from affordances.resources import Resource
from affordances.schemas import filter_query

__all__ = ["is_item_read", "read"]

_PAGING = ("page", "pageSize")


def is_item_read(operation: Operation) -> bool:
    # A read bound to one object requires its id; a collection read does not.
    return operation.resource.id_argument in operation.input_schema.get("required", ())


def read(ctx: Context, operation: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """The body of a read tool whose arguments passed its schema; raises Problem."""
    resource = operation.resource
    if is_item_read(operation):
        return ctx.represent(ctx.find(resource, arguments[resource.id_argument]))
    return _page(ctx, resource, arguments)


def _page(ctx: Context, resource: Resource, arguments: dict[str, Any]) -> dict[str, Any]:
    """``count``/``next``/``previous``/``results``, exactly the REST list's page."""
    filters = {name: value for name, value in arguments.items() if name not in _PAGING}
    page = reads.list_page(
        resource,
        ctx.user,
        filters=filters,
        page=arguments.get("page", 1),
        size=arguments.get("pageSize"),
        size_argument="pageSize",
        request=ctx.request,
    )
    # next/previous are the REST collection's own links, so both faces page alike.
    query = filter_query(filters)
    if "pageSize" in arguments:
        query["page_size"] = page.size
    return {
        "count": page.count,
        "next": _link(ctx, resource, query, page.number + 1) if page.has_next else None,
        "previous": _link(ctx, resource, query, page.number - 1) if page.has_previous else None,
        "results": ctx.represent_many(resource, page.objects),
    }


def _link(ctx: Context, resource: Resource, query: dict[str, Any], number: int) -> str | None:
    path = routes.list_path(resource)
    if path is None:
        return None
    query = {**query, "page": number} if number > 1 else query
    return ctx.absolute(path) + (f"?{urlencode(query, doseq=True)}" if query else "")
