"""``SchemaView``: drf-spectacular's document view, private to its caller, built once.

The document names only the operations the caller may use (see
:mod:`affordances.rest.openapi`), so two callers get two documents: a shared cache must
neither keep one nor hand it to another (``Cache-Control: private``, ``Vary:
Authorization, Cookie``). Generating it takes tens of milliseconds and its inputs are
few — the code, the settings and :func:`~affordances.rest.openapi.caller_key` — so each
distinct document is generated once per process and carries a strong ``ETag``;
``If-None-Match`` is answered 304 (the tag is unique per representation: the YAML and the
JSON document have two). A project whose own preprocessing hooks or
extensions read more of the request than that turns the memo off with
``AFFORDANCES["OPENAPI_MEMO"] = False``.

Like every other URL of the app's views, it answers a caller without valid credentials
``401`` (a problem document with the authentication classes' challenge) — drf-spectacular
serves its document to anyone (``SERVE_PERMISSIONS`` is ``AllowAny``). A project that
wants the document public says so where it mounts it: ``SchemaView.as_view(public=True)``
(then drf-spectacular's ``SERVE_PERMISSIONS`` alone decide).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from django.conf import settings as django_settings
from django.http import HttpResponse
from django.utils import translation
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from affordances import memo
from affordances.conf import settings
from affordances.encoding import canonical_json
from affordances.rest.base import ProblemResponsesMixin
from affordances.rest.memoized import MemoizedResponse
from affordances.rest.openapi import caller_key
from affordances.rest.views import conditional, representation_etag, vary_private

__all__ = ["SchemaView"]


@extend_schema(exclude=True)
class SchemaView(ProblemResponsesMixin, SpectacularAPIView):
    """Mount it where ``SpectacularAPIView`` would go::

    path("api/schema/", SchemaView.as_view(), name="schema")

    ``SchemaView.as_view(public=True)`` serves the document to callers without
    credentials too (what they may use: the operations of an anonymous caller).
    """

    # False: the project's DEFAULT_PERMISSION_CLASSES apply too, as on every app URL.
    public: bool = False

    # The language the document is written in: validated ``?lang=`` or the request's.
    language: str | None = None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        # ``?lang=`` picks one of LANGUAGES, or nothing: spectacular activates any text it
        # is given, and each text would be a new document to generate and keep. What the
        # request's language was before spectacular's override is served otherwise.
        lang = request.query_params.get("lang")
        known = django_settings.USE_I18N and lang in dict(django_settings.LANGUAGES)
        self.language = lang if known else translation.get_language()
        return super().get(request, *args, **kwargs)  # type: ignore[no-any-return, no-untyped-call]

    def get_permissions(self) -> Sequence[Any]:
        served = list(super().get_permissions())  # drf-spectacular's SERVE_PERMISSIONS
        if self.public:
            return served
        # The stubs say paths; DRF's settings object has imported the classes.
        defaults: list[Any] = list(api_settings.DEFAULT_PERMISSION_CLASSES)
        return [permission() for permission in defaults] + served

    def _get_version_parameter(self, request: Request) -> str | None:
        # ``?version=`` names one of the project's versions (REST_FRAMEWORK's
        # ALLOWED_VERSIONS or DEFAULT_VERSION) or is ignored: spectacular takes any text
        # when ALLOWED_VERSIONS is empty, and writes it into info.version and the
        # Content-Disposition header.
        version = request.query_params.get("version")
        known = {*(api_settings.ALLOWED_VERSIONS or ()), api_settings.DEFAULT_VERSION}
        return version if version is not None and version in known else None

    def download_name(self, request: Request, version: Any) -> str:
        """The file name of ``Content-Disposition``: drf-spectacular's (its ``TITLE``, the
        version, the negotiated format), as a header value — nothing that could end the
        quoted string or the header line."""
        title = spectacular_settings.TITLE or "schema"
        suffix = self.perform_content_negotiation(request, force=True)[0].format
        name = f"{title}{f' ({version})' if version else ''}.{suffix}"
        return "".join(char for char in name if char.isprintable() and char not in '"\\')

    def _get_schema_response(self, request: Request) -> HttpResponse:
        if self.language is not None and translation.get_language() != self.language:
            with translation.override(self.language):
                return self._get_schema_response(request)
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

        def generate() -> tuple[dict[str, Any], str, int]:
            generator = self.generator_class(
                urlconf=self.urlconf, api_version=version, patterns=self.patterns
            )
            schema = generator.get_schema(request=request, public=self.serve_public)  # type: ignore[no-untyped-call]
            encoded = canonical_json(schema).encode()
            digest = hashlib.sha256(encoded).hexdigest()
            return schema, f'"{digest[:32]}"', len(encoded) * memo.PARSED_JSON_FACTOR

        memoize = settings.OPENAPI_MEMO
        if memoize:
            schema, etag, _size = memo.memoized(key, generate, size=lambda kept: kept[2])
        else:
            schema, etag, _size = generate()
        headers = {
            "Content-Disposition": f'inline; filename="{self.download_name(request, version)}"',
            "ETag": etag,
        }
        etag = headers["ETag"] = representation_etag(request, etag)
        if not memoize:
            return conditional(request, etag, lambda: Response(schema, headers=headers))
        return conditional(
            request, etag, lambda: MemoizedResponse(schema, key=key, headers=headers)
        )

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        return vary_private(super().finalize_response(request, response, *args, **kwargs))
