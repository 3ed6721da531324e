"""``SchemaView``: drf-spectacular's document view, private to its caller.

The document names only the operations the caller may use (see
:mod:`affordances.rest.openapi`), so two callers get two documents: a shared cache must
neither keep one nor hand it to another (``Cache-Control: private``, ``Vary:
Authorization, Cookie``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from affordances.rest.views import vary_private

__all__ = ["SchemaView"]


@extend_schema(exclude=True)
class SchemaView(SpectacularAPIView):
    """Mount it where ``SpectacularAPIView`` would go::

    path("api/schema/", SchemaView.as_view(), name="schema")
    """

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        return vary_private(super().finalize_response(request, response, *args, **kwargs))
