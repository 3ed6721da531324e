"""Registered objects as MCP resources, named by their REST URL.

An object's resource URI is its representation's ``url`` — the same identity on both
faces, so the ``url`` in a tool result, ``resources/read`` and a plain GET of the API
all point at one thing. (Tool results carry no ``resource_link`` block beside it:
framework clients would hand it to the model as a second result, affordances.mcp.tools.)
Reading one returns the representation with its affordances; an object the caller may
not see is not found, exactly as a missing one.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.db.models import Model
from django.urls import Resolver404, resolve
from django.utils.text import capfirst

from affordances import reads, routes
from affordances.catalog import get_catalog
from affordances.mcp.context import Context
from affordances.mcp.transport import pagination
from affordances.mcp.transport.jsonrpc import (
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    JsonRpcError,
    dumps,
)
from affordances.problems import Problem
from affordances.resources import Resource

__all__ = ["find_resource", "list_resources", "list_templates", "locate", "read_resource"]

MIME_TYPE = "application/json"
_PK = "__affordances_pk__"


def _detail_url(ctx: Context, resource: Resource, pk: Any) -> str | None:
    path = routes.detail_path(resource, pk)
    return ctx.absolute(path) if path is not None else None


def _label(resource: Resource, pk: Any) -> dict[str, str]:
    return {"name": f"{resource.name}-{pk}", "title": f"{capfirst(resource.verbose_name)} #{pk}"}


def list_templates(ctx: Context) -> list[dict[str, Any]]:
    templates = []
    for resource in get_catalog().resources:
        url = _detail_url(ctx, resource, _PK)
        if url is None:
            continue
        templates.append(
            {
                "uriTemplate": url.replace(_PK, f"{{{resource.id_argument}}}"),
                "name": resource.name,
                "title": capfirst(resource.verbose_name),
                "description": (
                    f"One {resource.verbose_name} you may see, with the operations that apply "
                    f"to it now (`affordances`) and why others do not "
                    f"(`unavailableAffordances`)."
                ),
                "mimeType": MIME_TYPE,
            }
        )
    return templates


def list_resources(ctx: Context, cursor: str | None) -> dict[str, Any]:
    """The objects the caller may see, model after model, each by primary key."""
    offset = pagination.decode(cursor, "resources")
    size = ctx.page_size
    entries: list[dict[str, Any]] = []
    position = 0  # where the current model's objects start in the whole listing
    for resource in get_catalog().resources:
        if _detail_url(ctx, resource, _PK) is None:
            continue
        queryset = reads.visible(resource, ctx.user, request=ctx.request)
        count = queryset.count()
        start = max(offset - position, 0)
        wanted = size - len(entries)
        if wanted > 0 and start < count:
            for pk in queryset.values_list("pk", flat=True)[start : start + wanted]:
                entries.append(
                    {
                        "uri": _detail_url(ctx, resource, pk),
                        **_label(resource, pk),
                        "mimeType": MIME_TYPE,
                    }
                )
        position += count
    result: dict[str, Any] = {"resources": entries}
    if offset + len(entries) < position:
        result["nextCursor"] = pagination.encode("resources", offset + len(entries))
    return result


def locate(uri: str) -> tuple[Resource, str] | None:
    try:
        match = resolve(urlsplit(uri).path)
    except (Resolver404, ValueError):  # ValueError: not a URL at all
        return None
    for resource in get_catalog().resources:
        if routes.is_detail(resource, match):
            return resource, match.kwargs["pk"]
    return None


def find_resource(ctx: Context, uri: Any) -> tuple[Resource, str, Model]:
    """The object at ``uri`` if the caller may see it, as ``resources/read`` looks it up;
    raises what ``resources/read`` answers otherwise (hidden and missing look the same)."""
    if not isinstance(uri, str) or not uri:
        raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "uri" must be a string.')
    located = locate(uri)
    if located is not None:
        resource, pk = located
        # Only our own URLs: another host's /api/orders/1/ is not this server's resource.
        if _detail_url(ctx, resource, pk) == uri:
            try:
                return resource, pk, ctx.find(resource, pk)
            except Problem:
                pass
    raise _not_found(ctx, uri)


def read_resource(ctx: Context, uri: Any) -> dict[str, Any]:
    _, _, instance = find_resource(ctx, uri)
    try:
        representation = ctx.represent(instance)
    except Problem:
        raise _not_found(ctx, str(uri)) from None
    return {"contents": [{"uri": uri, "mimeType": MIME_TYPE, "text": dumps(representation)}]}


def _not_found(ctx: Context, uri: str) -> JsonRpcError:
    # 2026-07-28 moved "resource not found" from -32002 to -32602 (Invalid Params).
    code = INVALID_PARAMS if ctx.revision.modern else RESOURCE_NOT_FOUND
    return JsonRpcError(code, "Resource not found", data={"uri": uri})
