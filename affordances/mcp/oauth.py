"""django-oauth-toolkit as the MCP endpoints' authorization server (the ``oauth`` extra).

``pip install "django-affordances[oauth]"``, then, in the project (the demo does exactly
this; docs/howto/mcp-hosts.md#oauth)::

    INSTALLED_APPS = [..., "oauth2_provider"]
    OAUTH2_PROVIDER = {...}                       # docs/howto/mcp-hosts.md#oauth
    LOGIN_URL = "rest_framework:login"           # any login page (DOT asks for a user)
    AFFORDANCES = {
        ...,
        "MCP_AUTHORIZATION_SERVERS": ["/o"],      # the issuer below, on the same origin
        "MCP_AUTHENTICATION_CLASSES": [
            "affordances.mcp.oauth.OAuth2Authentication",
            "rest_framework_simplejwt.authentication.JWTAuthentication",  # optional
        ],
    }
    urlpatterns = [*protected_resource_urls(), *authorization_server_urls(), ...]

What django-oauth-toolkit 3.4 does itself, configured by ``OAUTH2_PROVIDER``:
RFC 8414 metadata, the authorization code grant with PKCE (S256 only), refresh token
rotation with reuse detection, RFC 8707 resource indicators bound into the grant and
the token (and checked by its bearer validation), RFC 9207 ``iss`` in the authorization
response, RFC 7591/7592 dynamic client registration and hashed token storage. What this
module adds: the URLs at the places MCP clients look for them, a registration endpoint
restricted to the one grant MCP uses, a DRF class that lets other bearer tokens
(simplejwt's) through to the next class, and a validator that makes its RFC 7662
introspection of another server's tokens safe to rely on (:class:`OAuth2Validator`).
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.error import URLError
from urllib.parse import urlencode, urlsplit
from urllib.request import Request as UrlRequest
from urllib.request import urlopen

from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import URLResolver, include, path
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as dot_views
from oauth2_provider.contrib.rest_framework import OAuth2Authentication as _DotAuthentication
from oauth2_provider.models import get_access_token_model
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.oauth2_validators import OAuth2Validator as _DotValidator
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from rest_framework.request import Request

__all__ = [
    "OAuth2Authentication",
    "OAuth2Validator",
    "RegistrationView",
    "TokenView",
    "authorization_server_urls",
]

# RFC 7591 values an MCP client registers with: the authorization code grant (and the
# refresh tokens that come with it), nothing else.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
RESPONSE_TYPES = frozenset({"code"})
# A registration request is a small JSON document.
MAX_REGISTRATION_BYTES = 64 * 1024
# An introspection answer is a small JSON document too.
MAX_INTROSPECTION_BYTES = 64 * 1024

log = logging.getLogger("affordances.mcp.oauth")


def _registration_error(description: str, error: str = "invalid_client_metadata") -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=400)
    response["Cache-Control"] = "no-store"
    return response


_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _https_or_loopback(uri: Any) -> bool:
    """RFC 9700 §2.1 with RFC 8252 §7.3's exception: plaintext http only to a loopback
    address, where native hosts (desktop apps, CLIs) receive the answer. Other schemes
    are left to ``OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"]``."""
    if not isinstance(uri, str):
        return True  # django-oauth-toolkit refuses it
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return True  # likewise
    return parts.scheme.lower() != "http" or host in _LOOPBACK


def _values(data: dict[str, Any], key: str, default: list[str]) -> list[Any] | None:
    value = data.get(key, default)
    return value if isinstance(value, list) else None


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationView(DynamicClientRegistrationView):  # type: ignore[misc]
    """django-oauth-toolkit's RFC 7591 registration endpoint, for the authorization code
    grant only: a client registering ``client_credentials``, ``password``, ``implicit``
    or a response type other than ``code`` is refused with ``invalid_client_metadata``
    (RFC 7591 §3.2.2), as is a body that is not a JSON object; an ``http`` redirect URI
    not on a loopback address with ``invalid_redirect_uri`` (native hosts listen on
    127.0.0.1, RFC 8252 §7.3; everything else is https, RFC 9700 §2.1)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if len(request.body) > MAX_REGISTRATION_BYTES:
            return _registration_error("The registration request is too large.")
        try:
            data = json.loads(request.body)
        except ValueError:
            return _registration_error("Send the client metadata as a JSON object.")
        if not isinstance(data, dict):
            return _registration_error("Send the client metadata as a JSON object.")
        grant_types = _values(data, "grant_types", ["authorization_code"])
        if grant_types is None or not set(grant_types) <= GRANT_TYPES:
            return _registration_error(
                "grant_types may hold only authorization_code and refresh_token."
            )
        if "authorization_code" not in grant_types:
            return _registration_error("grant_types must hold authorization_code.")
        response_types = _values(data, "response_types", ["code"])
        if response_types is None or not set(response_types) <= RESPONSE_TYPES:
            return _registration_error("response_types may hold only code.")
        uris = data.get("redirect_uris")
        if isinstance(uris, list) and not all(_https_or_loopback(uri) for uri in uris):
            return _registration_error(
                "A redirect URI is https, or http on a loopback address (RFC 8252 §7.3).",
                error="invalid_redirect_uri",
            )
        response: HttpResponse = super().post(request, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        return response


@method_decorator(csrf_exempt, name="dispatch")
class TokenView(dot_views.TokenView):  # type: ignore[misc]
    """django-oauth-toolkit's token endpoint; every answer ``application/json`` (RFC 6749
    §5.1, §5.2: its ``invalid_target`` errors came as ``text/html``) and never stored."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().post(request, *args, **kwargs)
        if response.content[:1] == b"{":
            response["Content-Type"] = "application/json"
        response["Cache-Control"] = "no-store"
        return response


def authorization_server_urls(prefix: str = "o/") -> list[URLResolver]:
    """django-oauth-toolkit's endpoints for the project's root URLconf, under ``prefix``
    (the issuer is the origin + ``/o``, the value for ``MCP_AUTHORIZATION_SERVERS``):
    ``authorize/``, ``token/``, ``revoke_token/``, ``register/`` (RFC 7591, and RFC 7592
    under it), and the RFC 8414 metadata at ``/.well-known/oauth-authorization-server/o``
    (where RFC 8414 §3.1 puts it for that issuer) and ``/o/.well-known/…`` (where some
    clients look)."""
    if not prefix.endswith("/") or prefix.startswith("/") or prefix == "/":
        raise ValueError("prefix is a path without leading slash, ending with one: 'o/'.")
    metadata = dot_views.OAuthServerMetadataView.as_view()
    patterns = [
        path(f"{prefix}authorize/", dot_views.AuthorizationView.as_view(), name="authorize"),
        path(f"{prefix}token/", TokenView.as_view(), name="token"),
        path(f"{prefix}revoke_token/", dot_views.RevokeTokenView.as_view(), name="revoke-token"),
        path(f"{prefix}register/", RegistrationView.as_view(), name="dcr-register"),
        path(
            f"{prefix}register/<str:client_id>/",
            DynamicClientRegistrationManagementView.as_view(),
            name="dcr-register-management",
        ),
        # The issuer (and RFC 9207's `iss`) is derived from this one's URL: origin + /o.
        path(
            f"{prefix}.well-known/oauth-authorization-server",
            metadata,
            name="oauth-server-metadata",
        ),
        path(
            f".well-known/oauth-authorization-server/{prefix.rstrip('/')}",
            metadata,
            name="oauth-server-metadata-issuer",
        ),
    ]
    return [path("", include((patterns, "oauth2_provider")))]


class OAuth2Authentication(_DotAuthentication):  # type: ignore[misc]
    """django-oauth-toolkit's bearer authentication, for ``MCP_AUTHENTICATION_CLASSES``
    (and ``DEFAULT_AUTHENTICATION_CLASSES``).

    It validates the token (expiry, revocation) and, for a token bound to resources
    (RFC 8707), that the request's URL is under one of them; the MCP endpoint checks the
    audience and the scopes again (affordances.mcp.authorization). A token it does not
    know is left to the next class: a JWT-shaped one (``header.payload.signature``)
    without a database query, since django-oauth-toolkit issues opaque tokens (unless
    it is configured to issue JWTs or to introspect tokens of another server, RFC
    7662); a token without a user (``client_credentials``) is not a caller, nor is
    one of a deactivated user.
    """

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        if (
            token.count(".") == 2
            and oauth2_settings.ACCESS_TOKEN_GENERATOR is None
            and not oauth2_settings.RESOURCE_SERVER_INTROSPECTION_URL
        ):
            return None
        # The Django request, not DRF's: django-oauth-toolkit reads request.POST, and on
        # DRF's request that parses (and consumes) the body the endpoint reads after.
        django_request = getattr(request, "_request", request)
        try:
            valid, oauth_request = get_oauthlib_core().verify_request(django_request, scopes=[])
        except ValueError as error:  # as django-oauth-toolkit's: a malformed query string
            raise SuspiciousOperation(error) from None
        user = oauth_request.user
        # A deactivated user's tokens stop working, as simplejwt's and DRF's do (and as
        # the login page refuses them); django-oauth-toolkit does not look.
        if valid and user is not None and getattr(user, "is_active", True):
            return user, oauth_request.access_token
        if valid:
            oauth_request.oauth2_error = {"error": "invalid_token"}
        # For authenticate_header, as django-oauth-toolkit keeps it.
        request.oauth2_error = getattr(oauth_request, "oauth2_error", {})  # type: ignore[attr-defined]
        return None


def _text(value: Any, max_length: int | None = None) -> bool:
    # A string the database takes as it is: PostgreSQL refuses NUL in text and jsonb.
    return (
        isinstance(value, str)
        and "\x00" not in value
        and (max_length is None or len(value) <= max_length)
    )


class OAuth2Validator(_DotValidator):  # type: ignore[misc]
    """django-oauth-toolkit's validator, for a resource server that validates the tokens
    of another authorization server by RFC 7662 introspection
    (``OAUTH2_PROVIDER["OAUTH2_VALIDATOR_CLASS"]``, with
    ``RESOURCE_SERVER_INTROSPECTION_URL``; docs/howto/mcp-hosts.md#any-other-authorization-server).

    It introspects as django-oauth-toolkit does — a token this database does not know is
    posted to the introspection endpoint; an active one is kept as a local access token
    (its ``aud`` as the token's ``resource``, its ``scope``, the user named by
    ``username``) until its ``exp`` or ``RESOURCE_SERVER_TOKEN_CACHING_SECONDS`` — with
    what a request path needs on top: a timeout (``introspection_timeout`` seconds;
    django-oauth-toolkit waits forever on an endpoint that does not answer), and an
    answer that is not a well-formed RFC 7662 document (an ``exp`` that is not a
    number, a ``username`` that is not a string or too long for the user model, a
    value PostgreSQL cannot store) treated as an inactive token — a 401 challenge, not
    a 500. The deprecated ``AUTHENTICATION_SERVER_EXP_TIME_ZONE`` is not applied:
    ``exp`` is UTC, as RFC 7662 says.
    """

    introspection_timeout: float = 5.0

    def _get_token_from_authentication_server(
        self,
        token: str,
        introspection_url: str,
        introspection_token: str | None,
        introspection_credentials: tuple[str, str] | list[str] | None,
    ) -> Any:
        content = self._introspect(
            token, introspection_url, introspection_token, introspection_credentials
        )
        if content is None or content.get("active") is not True:
            return None
        user_model = get_user_model()
        username = content.get("username")
        max_length = getattr(
            user_model._meta.get_field(user_model.USERNAME_FIELD), "max_length", None
        )
        if username is not None and not (username and _text(username, max_length)):
            return self._malformed("username", username)
        scope = content.get("scope", "")
        if not _text(scope):
            return self._malformed("scope", scope)
        audience = content.get("aud", [])
        audience = [audience] if isinstance(audience, str) else audience
        if not isinstance(audience, list) or not all(_text(entry) for entry in audience):
            return self._malformed("aud", audience)
        cached_until = timezone.now() + timedelta(
            seconds=oauth2_settings.RESOURCE_SERVER_TOKEN_CACHING_SECONDS
        )
        expires = cached_until
        if "exp" in content:
            exp = content["exp"]
            if isinstance(exp, bool) or not isinstance(exp, int | float):
                return self._malformed("exp", exp)
            try:  # an integer too large for a float or a date, inf and nan are refused
                expires = min(datetime.fromtimestamp(exp, tz=UTC), cached_until)
            except (OverflowError, OSError, ValueError):
                return self._malformed("exp", exp)
        if not django_settings.USE_TZ:
            expires = timezone.make_naive(expires, UTC)
        # As django-oauth-toolkit's: the user found (or created, without permissions) by
        # username through its hook; none for a token without one (client credentials).
        user = self.get_or_create_user_from_content(content) if username else None
        access_token, _created = get_access_token_model().objects.update_or_create(
            token_checksum=hashlib.sha256(token.encode("utf-8")).hexdigest(),
            defaults={
                # Hashed at rest (RFC 9700) when configured so: looked up by checksum.
                "token": "" if oauth2_settings.COMPLIANT_BCP_RFC9700_TOKEN_STORAGE else token,
                "user": user,
                "application": None,
                "scope": scope,
                "expires": expires,
                "resource": audience,
            },
        )
        return access_token

    def _introspect(
        self,
        token: str,
        url: str,
        bearer: str | None,
        credentials: tuple[str, str] | list[str] | None,
    ) -> dict[str, Any] | None:
        """The introspection endpoint's answer, or None when there is none to use."""
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        elif credentials:
            pair = f"{credentials[0]}:{credentials[1]}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        if urlsplit(url).scheme.lower() not in {"http", "https"}:
            log.warning("Introspection: %r is not an http(s) URL", url)
            return None
        request = UrlRequest(
            url, data=urlencode({"token": token}).encode(), headers=headers, method="POST"
        )
        try:
            with urlopen(request, timeout=self.introspection_timeout) as response:
                status = response.status
                body = response.read(MAX_INTROSPECTION_BYTES + 1)
        except (URLError, OSError, ValueError, http.client.HTTPException) as error:
            # Unreachable, refused, timed out, not http(s), or an HTTP error status.
            log.warning("Introspection at %r failed: %s", url, error)
            return None
        if status != 200 or len(body) > MAX_INTROSPECTION_BYTES:
            log.warning("Introspection at %r: status %s, %d bytes", url, status, len(body))
            return None
        try:
            content = json.loads(body)
        except ValueError:
            log.warning("Introspection at %r: not JSON", url)
            return None
        if not isinstance(content, dict):
            log.warning("Introspection at %r: not a JSON object", url)
            return None
        return content

    @staticmethod
    def _malformed(name: str, value: Any) -> None:
        # Fail closed: an answer the resource server cannot read does not let a token in.
        log.warning("Introspection: rejecting a token with a malformed %r: %.200r", name, value)
        return None
