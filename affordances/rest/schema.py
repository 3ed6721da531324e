"""``SchemaView``: drf-spectacular's document view, private to its caller, built once.

The document names only the operations the caller may use (see
:mod:`affordances.rest.openapi`), so two callers get two documents: a shared cache must
neither keep one nor hand it to another (``Cache-Control: private``, ``Vary:
Authorization, Cookie``). Generating it takes tens of milliseconds and its inputs are
few — the code, the settings and :func:`~affordances.rest.openapi.caller_key` — so each
distinct document is generated once per process and carries a strong ``ETag``;
``If-None-Match`` is answered 304. A project whose own preprocessing hooks or
extensions read more of the request than that turns the memo off with
``AFFORDANCES["OPENAPI_MEMO"] = False``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.utils import translation
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from affordances import memo
from affordances.conf import settings
from affordances.encoding import canonical_json
from affordances.rest.memoized import MemoizedResponse
from affordances.rest.openapi import caller_key
from affordances.rest.views import if_none_match, vary_private

__all__ = ["SchemaView"]


@extend_schema(exclude=True)
class SchemaView(SpectacularAPIView):
    """Mount it where ``SpectacularAPIView`` would go::

    path("api/schema/", SchemaView.as_view(), name="schema")
    """

    def _get_schema_response(self, request: Request) -> Response:
        version = self.api_version or request.version or self._get_version_parameter(request)
        user = getattr(request, "user", None)
        key = (
            "openapi",
            type(self),
            repr(self.urlconf),
            repr(self.patterns),
            repr(self.custom_settings),
            version,
            translation.get_language(),
            caller_key(request),
            # A private document also hides views by their permission classes: per user.
            None if self.serve_public else getattr(user, "pk", None),
        )

        def generate() -> tuple[dict[str, Any], str]:
            generator = self.generator_class(
                urlconf=self.urlconf, api_version=version, patterns=self.patterns
            )
            schema = generator.get_schema(request=request, public=self.serve_public)
            digest = hashlib.sha256(canonical_json(schema).encode()).hexdigest()
            return schema, f'"{digest[:32]}"'

        memoize = settings.OPENAPI_MEMO
        schema, etag = memo.memoized(key, generate) if memoize else generate()
        headers = {
            "Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"',
            "ETag": etag,
        }
        if if_none_match(request.headers.get("If-None-Match", ""), etag):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
        if not memoize:
            return Response(schema, headers=headers)
        return MemoizedResponse(schema, key=key, headers=headers)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        return vary_private(super().finalize_response(request, response, *args, **kwargs))
