"""The one read path: which objects a caller may see, filtered, ordered and paged.

REST lists and details, MCP reads and resources, HAL-FORMS collections, the admin and
the execution path all read through these functions, so every face shows exactly the
objects ``perform`` may act on — in the order and pages the registration declares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db import models

from affordances.problems import Problem
from affordances.resources import Resource

__all__ = ["Page", "find", "list_page", "page_size", "visible"]


@dataclass(frozen=True)
class Page:
    """One page of a list: its objects, the total count and where it sits."""

    objects: list[Any]
    count: int
    number: int
    size: int

    @property
    def has_next(self) -> bool:
        return self.number * self.size < self.count

    @property
    def has_previous(self) -> bool:
        return self.number > 1


def visible(resource: Resource, user: Any) -> models.QuerySet[Any]:
    """The objects ``user`` may see, in the registration's order."""
    return resource.scoped(user).order_by(*resource.ordering)


def find(resource: Resource, user: Any, pk: Any) -> Any:
    """The object ``pk`` if ``user`` may see it; hidden and missing are both not_found."""
    instance = visible(resource, user).filter(pk=resource.parse_pk(pk)).first()
    if instance is None:
        raise Problem.not_found()
    return instance


def filtered(
    resource: Resource, user: Any, filters: Mapping[str, Any], *, request: Any = None
) -> models.QuerySet[Any]:
    """:func:`visible`, narrowed by the registration's ``FILTERSET`` (unknown keys ignored)."""
    queryset = visible(resource, user)
    if resource.filterset_class is None:
        return queryset
    filterset = resource.filterset_class(data=dict(filters), queryset=queryset, request=request)
    if not filterset.is_valid():
        raise Problem.validation(
            {
                name: [str(message) for message in messages]
                for name, messages in filterset.errors.items()
            }
        )
    return filterset.qs


_SIZE = re.compile(r"[0-9]{1,9}")


def page_size(resource: Resource, requested: Any = None, *, argument: str = "page_size") -> int:
    """The page size for a request: the registration's default, or the one asked for,
    from 1 to its maximum. Anything else is a ``validation_error`` on ``argument`` (the
    face's name for it), not a size quietly replaced: the OpenAPI document and the MCP
    tool's schema say so."""
    if requested is None:
        return resource.page_size
    text = "" if isinstance(requested, bool) else str(requested)
    if _SIZE.fullmatch(text) is None or not 1 <= int(text) <= resource.max_page_size:
        raise Problem.validation({argument: [f"An integer from 1 to {resource.max_page_size}."]})
    return int(text)


def list_page(
    resource: Resource,
    user: Any,
    *,
    filters: Mapping[str, Any],
    page: Any = 1,
    size: Any = None,
    size_argument: str = "page_size",
    request: Any = None,
) -> Page:
    """One page of the objects ``user`` may see; a page past the end is not_found."""
    paginator = Paginator(
        filtered(resource, user, filters, request=request),
        page_size(resource, size, argument=size_argument),
    )
    try:
        current = paginator.page(1 if page is None else page)
    except (EmptyPage, PageNotAnInteger):
        raise Problem.not_found() from None
    return Page(
        objects=list(current.object_list),
        count=paginator.count,
        number=current.number,
        size=paginator.per_page,
    )
