"""Django's private API, used in exactly one place each."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

__all__ = ["fetched_rows"]


def fetched_rows(queryset: QuerySet[Any]) -> list[Any] | None:
    """The rows a queryset has already fetched, or None if it has not run.

    ``QuerySet._result_cache``: a list serializer writing a page holds the queryset DRF
    evaluated; evaluating it again (``list(queryset)``) would be a second query per
    page, and no public attribute says whether it ran.
    """
    rows: list[Any] | None = queryset._result_cache
    return rows
