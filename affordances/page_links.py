"""Where the pages of a resource's collection are, for every face.

A collection's URL is its list route's (:func:`affordances.routes.list_path`), and how
that list pages is declared on the view serving it: its DRF ``pagination_class`` (none:
the app's own ``page``/``page_size``). The REST face pages its list that way; MCP's list
tools link their pages here, so the page an agent follows is the page a REST client
reads — one answer in the core, read from DRF's own declaration, not from a face.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from rest_framework.pagination import BasePagination, LimitOffsetPagination, PageNumberPagination

from affordances import routes
from affordances.resources import Resource
from affordances.schemas import filter_query

__all__ = ["PAGE_PARAM", "PAGE_SIZE_PARAM", "page_link", "page_query"]

# The app's own paging: the list's query parameters that are not filters.
PAGE_PARAM = "page"
PAGE_SIZE_PARAM = "page_size"


def page_query(resource: Resource, number: int, size: int, *, sized: bool) -> dict[str, Any] | None:
    """The query parameters asking ``resource``'s list for page ``number`` of ``size``
    objects of the app's own paging (``sized``: the size was asked for), or None when its
    paginator has no way to say it: a cursor, or a page size other than its own that it
    takes no parameter for. Where the class has no page size of its own, the
    registration's is (as the list pages, :func:`affordances.rest.paging.paginator_for`)."""
    return _query(routes.list_view(resource), resource, number, size, sized=sized)


def _query(
    view: Any, resource: Resource, number: int, size: int, *, sized: bool
) -> dict[str, Any] | None:
    pagination_class = getattr(view, "pagination_class", None)
    if not isinstance(pagination_class, type) or not issubclass(pagination_class, BasePagination):
        query: dict[str, Any] = {PAGE_SIZE_PARAM: size} if sized else {}
        if number > 1:
            query[PAGE_PARAM] = number
        return query
    if issubclass(pagination_class, LimitOffsetPagination):
        offsets = pagination_class()
        query = {offsets.limit_query_param: size}
        if number > 1:
            query[offsets.offset_query_param] = (number - 1) * size
        return query
    if issubclass(pagination_class, PageNumberPagination):
        pages = pagination_class()
        own = resource.page_size if pages.page_size is None else pages.page_size
        query = {pages.page_query_param: number} if number > 1 else {}
        if size != own:
            if not pages.page_size_query_param:
                return None
            query[pages.page_size_query_param] = size
        return query
    return None  # a cursor (or a paginator of its own): no link says "page N"


def page_link(
    resource: Resource, filters: Mapping[str, Any], number: int, size: int, *, sized: bool
) -> str | None:
    """The path and query of page ``number`` of ``size`` objects of ``resource``'s list,
    narrowed by ``filters`` (JSON values, spelled as the query string spells them); None
    when the list is not routed or its paginator cannot say that page."""
    path = routes.list_path(resource)
    if path is None:
        return None
    view = routes.list_view(resource)
    if view is None:
        return None
    paging = _query(view, resource, number, size, sized=sized)
    if paging is None:
        return None
    query = {**filter_query(filters), **paging}
    return path + (f"?{urlencode(query, doseq=True)}" if query else "")
