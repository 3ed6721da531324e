"""``McpView``: an MCP endpoint of the catalog, authenticated by the project's DRF classes.

Mount one per profile::

    path("mcp", McpView.as_view(), name="mcp"),                       # B, hybrid
    path("mcp/static", McpView.as_view(profile=STATIC), name="mcp-static"),
    path("mcp/compact", McpView.as_view(profile=COMPACT), name="mcp-compact"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest
from django.utils.module_loading import import_string
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.settings import api_settings

from affordances.conf import settings
from affordances.mcp import authorization
from affordances.mcp.application import server_for
from affordances.mcp.profiles import HYBRID, Profile
from affordances.mcp.transport.http import MAX_REQUEST_BYTES, NotAuthenticated, StreamableHttpView
from affordances.mcp.transport.server import Server

__all__ = ["MAX_REQUEST_BYTES", "McpView", "authentication_classes"]


def authentication_classes() -> list[type[BaseAuthentication]]:
    """``AFFORDANCES["MCP_AUTHENTICATION_CLASSES"]``, or DRF's configured classes without
    session authentication: an agent presents a credential (a bearer token, say), and a
    browser's cookie must not drive the endpoint."""
    configured = settings.MCP_AUTHENTICATION_CLASSES
    if configured is not None:
        return [import_string(path) if isinstance(path, str) else path for path in configured]
    # The stubs say paths; DRF's settings object has imported the classes.
    defaults: list[Any] = list(api_settings.DEFAULT_AUTHENTICATION_CLASSES)
    return [cls for cls in defaults if not issubclass(cls, SessionAuthentication)]


class McpView(StreamableHttpView):
    """``POST /mcp`` (and its siblings): the catalog's tools for one :class:`Profile`."""

    # Unmatched URLs below this endpoint answer the app's problem documents, as under
    # the REST face's views (affordances.rest.not_found_view looks for this attribute).
    affordances_problem_documents = True

    profile: Profile = HYBRID

    # An OAuth protected resource: affordances.mcp.authorization describes it (RFC 9728).
    oauth_protected_resource = True

    def server(self) -> Server:
        return server_for(self.profile)

    def allowed_origins(self) -> Iterable[str]:
        return settings.MCP_ALLOWED_ORIGINS

    def _class_challenge(self, request: HttpRequest) -> str:
        # As DRF does: the first authentication class's challenge (simplejwt's
        # 'Bearer realm="api"', TokenAuthentication's 'Token'), else the transport's own.
        classes = authentication_classes()
        header = classes[0]().authenticate_header(Request(request)) if classes else None
        return header or super().challenge(request)

    def challenge(self, request: HttpRequest) -> str:
        # With OAuth configured, a bearer challenge naming the RFC 9728 metadata.
        return authorization.challenge(request, self._class_challenge(request))

    def scope_challenge(self, request: HttpRequest, scope: str) -> str:
        return authorization.scope_challenge(request, self._class_challenge(request), scope)

    def authenticate(self, request: HttpRequest) -> tuple[Any, Any] | None:
        # A DRF request around the POST: the credentials are read from it, and
        # serializers build absolute URLs (affordance targets, resource URIs) from it.
        drf_request = Request(request, authenticators=[cls() for cls in authentication_classes()])
        try:
            user = drf_request.user
        except (APIException, ValueError, TypeError, DjangoValidationError):
            # Invalid, expired or malformed credentials (a signed token naming no valid
            # user id included): one answer for all of them.
            raise NotAuthenticated from None
        if not getattr(user, "is_authenticated", False):
            if _presents_bearer_token(request):
                # A bearer token no class accepted is an invalid one (RFC 6750 §3.1), also
                # when a class (django-oauth-toolkit's) passes on it rather than failing.
                raise NotAuthenticated
            return None
        # Issued for this endpoint, with the scope to use it (once OAuth is configured).
        authorization.check_token(request, drf_request.auth)
        return user, drf_request


def _presents_bearer_token(request: HttpRequest) -> bool:
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    return scheme.lower() == "bearer" and bool(token.strip())
