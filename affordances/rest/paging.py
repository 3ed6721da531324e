"""DRF's pagination classes and filter backends on a resource's REST list.

A resource view's ``pagination_class`` (DRF's ``DEFAULT_PAGINATION_CLASS`` unless the
view sets its own) pages the list and shapes its answer (``get_paginated_response``);
without one the list answers the app's own page (``page``/``page_size``: the one read
path's :func:`affordances.reads.list_page`, as MCP's list tools do). Either way the
objects are the one read path's — what the caller may see, in the registration's
``ORDERING``, narrowed by its ``FILTERSET`` — and then by the view's ``SearchFilter`` and
``OrderingFilter``. What the list cannot honour is a system check
(:mod:`affordances.rest.checks`), never silence.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

from django.core.exceptions import FieldError
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from django.db.models.constants import LOOKUP_SEP
from rest_framework import exceptions
from rest_framework.filters import OrderingFilter, SearchFilter
from rest_framework.pagination import (
    BasePagination,
    CursorPagination,
    LimitOffsetPagination,
    PageNumberPagination,
)
from rest_framework.request import Request

from affordances.caches import cached
from affordances.problems import Problem
from affordances.resources import Resource

__all__ = [
    "APPLIED_BACKENDS",
    "MAX_SEARCH_TERMS",
    "MAX_SEARCH_TERM_LENGTH",
    "applied_backends",
    "is_django_filter_backend",
    "is_driven",
    "narrow",
    "own_cursor_ordering",
    "paginate",
    "paginator_for",
    "paging_parameters",
    "regex_search_fields",
    "stable_terms",
]

# The filter backends the list applies after the registration's FILTERSET. django-filter's
# DjangoFilterBackend is not among them: the registration's FILTERSET is the list's one
# filter (MCP's list tool takes the same), applied once.
APPLIED_BACKENDS: tuple[type[Any], ...] = (SearchFilter, OrderingFilter)

# A search is one condition per term and field: bounded, so a query string of thousands
# of words is a 400, not a query too deep for the database. A term longer than this is
# no word anyone searches for (SQLite refuses LIKE patterns over 50,000 bytes).
MAX_SEARCH_TERMS = 20
MAX_SEARCH_TERM_LENGTH = 200

# Each paginator's query parameters: they page the list, they do not filter it.
_PAGING_ATTRIBUTES = (
    "page_query_param",
    "page_size_query_param",
    "limit_query_param",
    "offset_query_param",
    "cursor_query_param",
)


def is_django_filter_backend(backend: Any) -> bool:
    """django-filter's ``DjangoFilterBackend`` or a subclass (known by name: django-filter
    is the project's dependency, not the library's)."""
    return isinstance(backend, type) and any(
        klass.__name__ == "DjangoFilterBackend" and klass.__module__.startswith("django_filters")
        for klass in backend.__mro__
    )


def is_driven(pagination_class: Any) -> TypeGuard[type[BasePagination]]:
    """A pagination class the list can drive: any DRF ``BasePagination``."""
    return isinstance(pagination_class, type) and issubclass(pagination_class, BasePagination)


def own_cursor_ordering(pagination_class: type[Any]) -> bool:
    """A ``CursorPagination`` subclass declares its own ``ordering`` (DRF's ``-created``
    is no ordering of any registered model: the registration's is used instead)."""
    for klass in pagination_class.__mro__:
        if klass is CursorPagination:
            return False
        if "ordering" in vars(klass):
            return True
    return False


def paginator_for(view: Any, resource: Resource) -> BasePagination | None:
    """The view's DRF paginator, or None: the list answers the app's own page.

    Where the class has no page size of its own (DRF's ``PAGE_SIZE`` unset) the
    registration's ``PAGE_SIZE`` and ``MAX_PAGE_SIZE`` fill it in, so no list is ever
    unbounded; a ``CursorPagination`` without an ``ordering`` of its own follows the
    registration's ``ORDERING``.
    """
    pagination_class = getattr(view, "pagination_class", None)
    if not is_driven(pagination_class):
        return None  # nothing to drive, or not a paginator (affordances.W009 says so)
    if issubclass(pagination_class, CursorPagination):
        pagination_class = _stable_class(_StableCursorOrdering, pagination_class)
    paginator: BasePagination = pagination_class()
    if isinstance(paginator, PageNumberPagination | CursorPagination):
        if paginator.page_size is None:
            paginator.page_size = resource.page_size
        if paginator.max_page_size is None:
            paginator.max_page_size = resource.max_page_size
    if isinstance(paginator, LimitOffsetPagination):
        if paginator.default_limit is None:
            paginator.default_limit = resource.page_size
        if paginator.max_limit is None:
            paginator.max_limit = resource.max_page_size
    if isinstance(paginator, CursorPagination):
        _follow_registration(paginator, resource)
    return paginator


def _follow_registration(paginator: CursorPagination, resource: Resource) -> None:
    """The cursor's ordering: its class's, else the registration's (see
    :class:`_StableCursorOrdering` for a caller's choice)."""
    if not own_cursor_ordering(type(paginator)):
        paginator.ordering = resource.ordering
    paginator.affordances_default = _terms(paginator.ordering)  # type: ignore[attr-defined]
    paginator.affordances_resource = resource  # type: ignore[attr-defined]


class _StableCursorOrdering(CursorPagination):
    """Put before the project's ``CursorPagination`` class (:func:`_stable_class`): a
    caller's ``OrderingFilter`` choice ends with the cursor's ordering and then the
    registration's as tiebreaks, so objects sharing a value keep one order from page to
    page (the cursor's offset relies on it)."""

    affordances_default: tuple[str, ...]
    affordances_resource: Resource

    def get_ordering(self, request: Request, queryset: Any, view: Any) -> tuple[str, ...]:
        default, resource = self.affordances_default, self.affordances_resource
        ordering = _terms(super().get_ordering(request, queryset, view)) or default
        if ordering != default and LOOKUP_SEP in ordering[0]:
            # A position is read from the object's own attribute: a caller's ordering
            # across a relation has none, so it is ignored (as an unknown field is).
            ordering = default
        stable = stable_terms(ordering, default, resource.model)
        return tuple(stable_terms(stable, resource.ordering, resource.model))


class _LiteralSearch(SearchFilter):
    """Put before the project's ``SearchFilter`` class (:func:`_stable_class`): searches
    leave out the view's regex fields (``"$name"``): a caller's term would reach the
    database as a pattern — a database error when malformed, super-linear work when
    crafted (``affordances.W012`` says so at start-up)."""

    def get_search_fields(self, view: Any, request: Request) -> Any:
        fields = super().get_search_fields(view, request)
        regex = regex_search_fields(fields)
        return [field for field in fields or () if field not in regex] if regex else fields


# One subclass per project class (a handful): the project's class keeps its own
# behaviour, the library's mixin only adds to it, and no method is replaced on an
# instance.
@cached("stable paging classes", keys="mixin, project class", max_entries=64)
def _stable_class(mixin: type[Any], project_class: type[Any]) -> type[Any]:
    if issubclass(project_class, mixin):
        return project_class
    return type(project_class.__name__, (mixin, project_class), {"__module__": __name__})


def _terms(ordering: Any) -> tuple[str, ...]:
    return (ordering,) if isinstance(ordering, str) else tuple(ordering)


def paging_parameters(paginator: BasePagination | None) -> set[str]:
    """The query parameters ``paginator`` reads (not filters of the list)."""
    names = (getattr(paginator, attribute, None) for attribute in _PAGING_ATTRIBUTES)
    return {name for name in names if isinstance(name, str) and name}


def applied_backends(view: Any) -> list[type[Any]]:
    """The view's filter backends the list applies, in the view's order."""
    backends: Iterable[Any] = getattr(view, "filter_backends", None) or ()
    return [
        backend
        for backend in backends
        if isinstance(backend, type) and issubclass(backend, APPLIED_BACKENDS)
    ]


def narrow(
    queryset: models.QuerySet[Any],
    request: Request,
    view: Any,
    resource: Resource,
    backends: Sequence[type[Any]],
) -> models.QuerySet[Any]:
    """``queryset`` (the read path's, already filtered by the FILTERSET) narrowed and
    ordered by ``backends``. Input they refuse is a ``validation_error`` naming their
    parameter; an ordering the database cannot follow is ignored, as DRF ignores an
    unknown field; a caller's ordering ends with the registration's as a tiebreak."""
    for backend_class in backends:
        if issubclass(backend_class, SearchFilter):
            backend_class = _stable_class(_LiteralSearch, backend_class)
        backend = backend_class()
        if isinstance(backend, SearchFilter):
            _check_search(backend, request)
            queryset = _applied(backend, backend.search_param, queryset, request, view)
        elif isinstance(backend, OrderingFilter):
            try:
                ordered = _applied(backend, backend.ordering_param, queryset, request, view)
            except FieldError:
                # A serializer field that is no database column (a method's value).
                ordered = queryset
            queryset = _stable(ordered, resource)
    return queryset


def regex_search_fields(fields: Any) -> list[str]:
    """The regex search fields (``"$name"``) among a view's ``search_fields``."""
    return [field for field in fields or () if isinstance(field, str) and field.startswith("$")]


def _check_search(backend: SearchFilter, request: Request) -> None:
    text = request.query_params.get(backend.search_param, "")
    if "\x00" in text:  # PostgreSQL refuses NUL in text; DRF says so too, without a name
        raise Problem.validation({backend.search_param: ["Null characters are not allowed."]})
    try:
        terms = backend.get_search_terms(request)
    except exceptions.ValidationError as exc:
        raise Problem.validation({backend.search_param: _messages(exc)}) from None
    if len(terms) > MAX_SEARCH_TERMS or any(len(t) > MAX_SEARCH_TERM_LENGTH for t in terms):
        raise Problem.validation(
            {
                backend.search_param: [
                    f"At most {MAX_SEARCH_TERMS} terms of at most "
                    f"{MAX_SEARCH_TERM_LENGTH} characters."
                ]
            }
        )


def _applied(
    backend: Any, parameter: str, queryset: models.QuerySet[Any], request: Request, view: Any
) -> models.QuerySet[Any]:
    try:
        filtered: models.QuerySet[Any] = backend.filter_queryset(request, queryset, view)
    except (exceptions.ValidationError, DjangoValidationError) as exc:
        raise Problem.validation({parameter: _messages(exc)}) from None
    return filtered


def _messages(exc: Exception) -> list[str]:
    detail = getattr(exc, "detail", None)
    if detail is None:
        detail = getattr(exc, "messages", None) or [str(exc)]
    if isinstance(detail, dict):
        detail = [message for messages in detail.values() for message in messages]
    if not isinstance(detail, list):
        detail = [detail]
    return [str(message) for message in detail]


def _stable(queryset: models.QuerySet[Any], resource: Resource) -> models.QuerySet[Any]:
    current = [term for term in queryset.query.order_by if isinstance(term, str)]
    if len(current) == len(queryset.query.order_by):  # names only, no expressions
        terms = stable_terms(current, resource.ordering, resource.model)
        if len(terms) > len(current):
            return queryset.order_by(*terms)
    return queryset


def stable_terms(
    ordering: Sequence[str], tiebreak: Sequence[str], model: type[models.Model]
) -> list[str]:
    """``ordering``, then the terms of ``tiebreak`` on fields it does not order by."""
    pk_name = model._meta.pk.name if model._meta.pk is not None else "pk"

    def field(term: str) -> str:
        name = term.lstrip("-")
        return pk_name if name == "pk" else name

    named = {field(term) for term in ordering}
    return [*ordering, *(term for term in tiebreak if field(term) not in named)]


def paginate(
    paginator: BasePagination, queryset: models.QuerySet[Any], request: Request, view: Any
) -> list[Any] | None:
    """One page from the DRF paginator; None when it declines to page (the list answers
    the app's own page then). A cursor the model cannot read (a position that is no
    value of the ordering's field, a NUL the database refuses) is an invalid cursor:
    DRF's not_found."""
    if isinstance(paginator, CursorPagination):
        cursor = paginator.decode_cursor(request)  # NotFound when it is not a cursor
        position = None if cursor is None else cursor.position
        if isinstance(position, str) and "\x00" in position:
            raise exceptions.NotFound(paginator.invalid_cursor_message)
        try:
            page = paginator.paginate_queryset(queryset, request, view=view)
        except (ValueError, TypeError, OverflowError, DjangoValidationError):
            raise exceptions.NotFound(paginator.invalid_cursor_message) from None
    else:
        page = paginator.paginate_queryset(queryset, request, view=view)
    return None if page is None else list(page)
