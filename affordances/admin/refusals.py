"""Malformed admin requests are a 400 refusal, never a database error (a 500).

A NUL in a change-list filter (``?status__exact=%00``) reaches PostgreSQL, which cannot
store or compare it (``DataError``); SQLite lets it through. Neither has any use for
control characters in a query string or a URL, so every view of a model admin refuses
them before the view runs — the same answer on every database. A bulk action's selected
ids that are no ids of the model are refused the same way (Django would raise
``ValueError`` on filtering by them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.contrib.admin import helpers
from django.core.exceptions import BadRequest, ValidationError
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern

__all__ = [
    "MalformedRequestRefusalMixin",
    "has_control_characters",
    "refuse_control_characters",
]

# C0 controls (NUL included), DEL and C1 controls: Unicode category Cc.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def has_control_characters(values: Iterable[Any]) -> bool:
    return any(isinstance(value, str) and _CONTROL.search(value) for value in values)


def refuse_control_characters(request: HttpRequest, *values: Any) -> None:
    """Raise ``BadRequest`` (400) if the query string or ``values`` hold a control character.

    Keys and values of the query string are checked (filters, ``q``, ``o``, ``p``,
    ``_changelist_filters``, …), and the URL's own arguments (an object id).
    """
    query = [text for key, items in request.GET.lists() for text in (key, *items)]
    if has_control_characters(query) or has_control_characters(values):
        raise BadRequest("Control characters are not allowed in the URL or query string.")


def _refusing(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refuse_control_characters(request, *args, *kwargs.values())
        return view(request, *args, **kwargs)

    return checked


class MalformedRequestRefusalMixin:
    """Mix into a ``ModelAdmin``: its views answer malformed requests with a 400.

    Every URL the admin serves is wrapped, the project's own ``get_urls`` additions
    included; its search (also the site's autocomplete, which searches through this
    admin) and its bulk actions' selections are checked too. ``AffordanceAdminMixin``
    includes it; plain ``ModelAdmin`` classes may mix it in as well.
    """

    model: type[Model]

    @property
    def urls(self) -> list[Any]:
        return [
            URLPattern(url.pattern, _refusing(url.callback), url.default_args, url.name)
            if isinstance(url, URLPattern)
            else url
            for url in self.get_urls()  # type: ignore[attr-defined]
        ]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        if has_control_characters([search_term]):
            raise BadRequest("Control characters are not allowed in a search.")
        return super().get_search_results(request, queryset, search_term)  # type: ignore[misc, no-any-return]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST":
            self._refuse_malformed_selection(request)
        return super().changelist_view(request, extra_context)  # type: ignore[misc, no-any-return]

    def _refuse_malformed_selection(self, request: HttpRequest) -> None:
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if has_control_characters(selected):
            raise BadRequest("Control characters are not allowed in a selection.")
        pk = self.model._meta.pk
        assert pk is not None
        for value in selected:
            try:
                pk.to_python(value)
            except (ValidationError, ValueError, TypeError):
                raise BadRequest("The selection names no object.") from None
