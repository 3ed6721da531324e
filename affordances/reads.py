"""The one read path: which objects a caller may see, filtered, ordered and paged.

REST lists and details, MCP reads and resources, HAL-FORMS collections, the admin and
the execution path all read through these functions, so every face shows exactly the
objects ``perform`` may act on — in the order and pages the registration declares.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db import models

from affordances import capabilities
from affordances.problems import Problem
from affordances.resources import Resource
from affordances.schemas import filter_query

__all__ = ["Page", "find", "list_page", "one", "page_size", "visible", "whole_number"]


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


def visible(resource: Resource, user: Any, *, request: Any = None) -> models.QuerySet[Any]:
    """The objects ``user`` may see, in the registration's order: its ``QUERYSET``, given
    ``request`` (the face's; None without one) when it takes it. Every face passes its
    request, so the registration decides once what each face shows and acts on."""
    # Before the project's QUERYSET, which may ask has_perm: the request's permissions
    # then come from the shared cache, not from ModelBackend's two queries.
    capabilities.prime(user)
    return resource.scoped(user, request).order_by(*resource.ordering)


def one(queryset: models.QuerySet[Any], pk: Any) -> Any:
    """The object ``pk`` of ``queryset``, or None. Without the queryset's order, as
    ``QuerySet.get()`` reads one object: one primary key is one row at most, and
    compiling an ORDER BY no row needs was a third of the query's cost (DISTINCT ON
    keeps it: its expressions must lead the ORDER BY)."""
    narrowed = queryset.filter(pk=pk)
    if not narrowed.query.distinct_fields:
        narrowed = narrowed.order_by()
    return next(iter(narrowed[:1]), None)


def find(resource: Resource, user: Any, pk: Any, *, request: Any = None) -> models.Model:
    """The object ``pk`` if ``user`` may see it; hidden and missing are both not_found."""
    instance: models.Model | None = one(
        visible(resource, user, request=request), resource.parse_pk(pk)
    )
    if instance is None:
        raise Problem.not_found()
    return instance


def filtered(
    resource: Resource, user: Any, filters: Mapping[str, Any], *, request: Any = None
) -> models.QuerySet[Any]:
    """:func:`visible`, narrowed by the registration's ``FILTERSET`` (unknown keys ignored)."""
    queryset = visible(resource, user, request=request)
    if resource.filterset_class is None:
        return queryset
    # JSON values (an MCP call's 1, true) read as the query string's "1", "true".
    data = filter_query(filters)
    filterset = resource.filterset_class(data=data, queryset=queryset, request=request)
    if not filterset.is_valid():
        raise Problem.validation(
            {
                name: [str(message) for message in messages]
                for name, messages in filterset.errors.items()
            }
        )
    narrowed: models.QuerySet[Any] = filterset.qs
    return narrowed


# Plain ASCII digits only: int() alone would also read "0_2", "+2", " 2" and the digits
# of other scripts (Arabic-Indic, full-width), spellings the OpenAPI document and MCP's
# schema (an integer) do not allow.
_DIGITS = re.compile(r"[0-9]+")
# Beyond any page or size: longer numbers are not parsed, they only compare as large.
_LARGE_DIGITS = 18
_LARGE = 10**_LARGE_DIGITS


def whole_number(requested: Any, *, argument: str, maximum: int | None = None) -> int:
    """``requested`` as the positive integer a paging argument is: plain ASCII digits,
    from 1 (to ``maximum``). Anything else is a ``validation_error`` on ``argument`` (the
    face's name for it), never a value read leniently or quietly replaced. One rule for
    the page number and the page size, on every face."""
    text = "" if isinstance(requested, bool) else str(requested)
    number = 0
    if _DIGITS.fullmatch(text):
        digits = text.lstrip("0")
        number = _LARGE if len(digits) > _LARGE_DIGITS else int(digits or "0")
    if number < 1 or (maximum is not None and number > maximum):
        bounds = f"from 1 to {maximum}" if maximum is not None else "from 1"
        raise Problem.validation({argument: [f"An integer {bounds}."]})
    return number


def page_size(resource: Resource, requested: Any = None, *, argument: str = "page_size") -> int:
    """The page size for a request: the registration's default, or the one asked for,
    from 1 to its maximum (:func:`whole_number`): the OpenAPI document and the MCP tool's
    schema say so."""
    if requested is None:
        return resource.page_size
    return whole_number(requested, argument=argument, maximum=resource.max_page_size)


def list_page(
    resource: Resource,
    user: Any,
    *,
    filters: Mapping[str, Any],
    page: Any = 1,
    size: Any = None,
    size_argument: str = "page_size",
    page_argument: str = "page",
    request: Any = None,
    narrow: Callable[[models.QuerySet[Any]], models.QuerySet[Any]] | None = None,
) -> Page:
    """One page of the objects ``user`` may see. The page number is as strict as the
    size (:func:`whole_number`: a ``validation_error`` on ``page_argument``); a page past
    the end is not_found. ``narrow`` (a face's own search or ordering) takes the filtered
    objects before they are paged: it may narrow or reorder them, never widen."""
    per_page = page_size(resource, size, argument=size_argument)
    number = 1 if page is None else whole_number(page, argument=page_argument)
    objects = filtered(resource, user, filters, request=request)
    if narrow is not None:
        objects = narrow(objects)
    paginator = Paginator(objects, per_page)
    try:
        current = paginator.page(number)
    except (EmptyPage, PageNotAnInteger):
        raise Problem.not_found() from None
    return Page(
        objects=list(current.object_list),
        count=paginator.count,
        number=current.number,
        size=paginator.per_page,
    )
