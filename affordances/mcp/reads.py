"""The read operations over MCP: one object, or one page of objects, through the core's
one read path, rendered as REST renders them."""

from __future__ import annotations

from typing import Any

from affordances import page_links, reads
from affordances.mcp.context import Context
from affordances.operations import Operation
from affordances.resources import Resource

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
    # next/previous are the collection's own page links (affordances.page_links), so
    # both faces page alike: in the collection's own paging (a DRF paginator's, if any).
    sized = "pageSize" in arguments

    def link(number: int) -> str | None:
        found = page_links.page_link(resource, filters, number, page.size, sized=sized)
        return ctx.absolute(found) if found is not None else None

    return {
        "count": page.count,
        "next": link(page.number + 1) if page.has_next else None,
        "previous": link(page.number - 1) if page.has_previous else None,
        "results": ctx.represent_many(resource, page.objects),
    }
