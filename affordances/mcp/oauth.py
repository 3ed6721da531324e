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
response, RFC 7591/7592 dynamic client registration, Client ID Metadata Documents
(``CIMD_ENABLED``) and hashed token storage. What this module adds: the URLs at the
places MCP clients look for them, a registration endpoint restricted to the one grant
MCP uses, metadata documents under the same policy and fetched safely
(affordances.mcp.cimd), a DRF class that lets other bearer tokens (simplejwt's) through
to the next class, and a validator that makes its RFC 7662 introspection of another
server's tokens safe to rely on (:class:`OAuth2Validator`).
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
from django.http import HttpRequest, HttpResponse
from django.urls import URLResolver, include, path
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views as dot_views
from oauth2_provider.contrib.rest_framework import OAuth2Authentication as _DotAuthentication
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_refresh_token_model,
    revoke_access_token,
)
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.oauth2_validators import OAuth2Validator as _DotValidator
from oauth2_provider.settings import oauth2_settings
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from affordances.conf import settings
from affordances.mcp import cimd, identities
from affordances.mcp.authorization import MARKER, granted_scopes
from affordances.mcp.consent import AuthorizationView
from affordances.mcp.registration import RegistrationManagementView, RegistrationView
from affordances.mcp.throttling import throttled
from affordances.models import OAuthCodeExchange

__all__ = [
    "AuthorizationView",
    "OAuth2Authentication",
    "OAuth2Validator",
    "RegistrationView",
    "TokenView",
    "authorization_server_urls",
]

# An introspection answer is a small JSON document.
MAX_INTROSPECTION_BYTES = 64 * 1024

log = logging.getLogger("affordances.mcp.oauth")


@method_decorator(csrf_exempt, name="dispatch")
class TokenView(dot_views.TokenView):  # type: ignore[misc]
    """django-oauth-toolkit's token endpoint; every answer ``application/json`` (RFC 6749
    §5.1, §5.2: its ``invalid_target`` errors came as ``text/html``) and never stored;
    rate-limited per client address (``OAUTH_THROTTLE_RATES["token"]``): a wrong
    confidential client secret costs a password hash."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limited = throttled(request, "token")
        if limited is not None:
            return limited
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
        path(f"{prefix}authorize/", AuthorizationView.as_view(), name="authorize"),
        path(f"{prefix}token/", TokenView.as_view(), name="token"),
        path(f"{prefix}revoke_token/", dot_views.RevokeTokenView.as_view(), name="revoke-token"),
        path(f"{prefix}register/", RegistrationView.as_view(), name="dcr-register"),
        path(
            f"{prefix}register/<str:client_id>/",
            RegistrationManagementView.as_view(),
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

    **Scopes mean the same on every face.** In ``DEFAULT_AUTHENTICATION_CLASSES`` (the
    REST face, HAL-FORMS), a token's scopes narrow what it may do as they do on MCP: a
    safe method (``GET``, ``HEAD``, ``OPTIONS``) needs ``MCP_READ_SCOPE``, any other
    (a transition, a create, an edit) ``MCP_WRITE_SCOPE`` too. Enforcing
    rather than refusing OAuth tokens outside MCP keeps one meaning for a scope (an
    ``mcp:read`` token reads, wherever it is presented) and lets a project give its
    OAuth clients the REST face on purpose. A token short of a scope is no credential
    for that request: 401, as the REST face answers every request without valid
    credentials; a token bound to the
    MCP endpoint (RFC
    8707, as MCP clients ask for) is refused elsewhere anyway.
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
            missing = _missing_scopes(django_request, request.method, oauth_request.access_token)
            if not missing:
                return user, oauth_request.access_token
            # Not a caller for this request: the 401's challenge says what it lacks.
            oauth_request.oauth2_error = {
                "error": "insufficient_scope",
                "error_description": f"This request needs the scope {' '.join(missing)}.",
            }
            valid = False
        if valid:
            oauth_request.oauth2_error = {"error": "invalid_token"}
        # For authenticate_header, as django-oauth-toolkit keeps it.
        request.oauth2_error = getattr(oauth_request, "oauth2_error", {})  # type: ignore[attr-defined]
        return None


def _active(user: Any) -> bool:
    return user is not None and bool(getattr(user, "is_active", True))


def _checksum(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _record_exchange(code: str, client: Any, access: str | None) -> None:
    """Remember what ``code`` was exchanged for, until the tokens could have expired."""
    access_token = (
        get_access_token_model().objects.filter(token_checksum=_checksum(access)).first()
        if access
        else None
    )
    refresh = (
        get_refresh_token_model().objects.filter(access_token=access_token).first()
        if access_token is not None
        else None
    )
    lifetime = oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or (
        oauth2_settings.ACCESS_TOKEN_EXPIRE_SECONDS
    )
    if isinstance(lifetime, timedelta):
        lifetime = lifetime.total_seconds()
    OAuthCodeExchange.objects.update_or_create(
        code_checksum=_checksum(code),
        defaults={
            "application_id": client.pk,
            "token_family": getattr(refresh, "token_family", None),
            "access_token_id": getattr(access_token, "pk", None),
            "expires_at": timezone.now()
            + timedelta(seconds=float(lifetime) + oauth2_settings.ACCESS_TOKEN_EXPIRE_SECONDS),
        },
    )


def _revoke_exchange(code: str, client: Any) -> None:
    if not isinstance(code, str) or client is None:
        return
    exchange = OAuthCodeExchange.objects.filter(
        code_checksum=_checksum(code), application_id=client.pk
    ).first()
    if exchange is None:
        return
    log.warning("A used authorization code was presented again: revoking its tokens.")
    if exchange.token_family is not None:
        get_refresh_token_model().revoke_family(exchange.token_family)
    if exchange.access_token_id is not None:
        access = get_access_token_model().objects.filter(pk=exchange.access_token_id).first()
        if access is not None:
            revoke_access_token(access)


def _mcp_endpoint(request: HttpRequest) -> bool:
    match = getattr(request, "resolver_match", None)
    view_class = getattr(getattr(match, "func", None), "view_class", None)
    return bool(getattr(view_class, MARKER, False))


def _missing_scopes(request: HttpRequest, method: str | None, token: Any) -> list[str]:
    """Outside the MCP endpoints, a token's scopes mean what they mean there: the read
    scope to read (a safe method: GET, HEAD, OPTIONS), the write scope too for anything
    else (a transition, a create) — as a tool that is not read-only needs it on MCP.
    The MCP endpoints check per tool call (affordances.mcp.authorization)."""
    if _mcp_endpoint(request):
        return []
    scopes = granted_scopes(token)
    if scopes is None:
        return []
    needed = [settings.MCP_READ_SCOPE]
    if (method or "GET").upper() not in SAFE_METHODS:
        needed.append(settings.MCP_WRITE_SCOPE)
    return [scope for scope in needed if scope is not None and scope not in scopes]


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

    As the ``oauth`` extra's own authorization server's validator, it also ends a
    person's sessions when they say so (below), and looks up the clients of Client ID
    Metadata Documents without fetching a new one outside the authorization endpoint
    (:meth:`_load_application`).
    """

    introspection_timeout: float = 5.0

    # --- clients described by a metadata document (affordances.mcp.cimd) --------------

    def _load_application(self, client_id: str, request: Any) -> Any:
        """django-oauth-toolkit's lookup, but a Client ID Metadata Document is fetched
        for the first time only at the authorization endpoint, after the person logged
        in (affordances.mcp.consent): here a URL never seen is an unknown client — an
        anonymous token request makes the server fetch nothing new — and a known one
        is fetched again when its time is up, under the same policy (the last good one
        kept when that fails)."""
        if not cimd.applies(client_id):
            return super()._load_application(client_id, request)
        cached = request.client
        if (
            isinstance(cached, get_application_model())
            and cached.client_id == client_id
            and cached.is_usable(request)
        ):
            return cached
        client = cimd.known(client_id, request)
        if client is None or not client.is_usable(request):
            return None
        request.client = client
        return client

    # --- issuing: a person ends every session they started ----------------------------

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        """django-oauth-toolkit's check, and a deactivated user's refresh token is
        ``invalid_grant`` (it did not look: a deactivated user kept minting tokens)."""
        valid = bool(
            super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        )
        return valid and _active(request.user)

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        """django-oauth-toolkit's check; a deactivated user's code is refused; and a code
        presented again revokes what it was exchanged for (RFC 6749 §4.1.2: whoever
        replays it may hold the tokens too)."""
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return _active(request.user)
        _revoke_exchange(code, client)
        return False

    def _save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        saved = super()._save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "authorization_code" and getattr(request, "code", None):
            _record_exchange(request.code, request.client, token.get("access_token"))
        return saved

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
        sub = content.get("sub")
        if sub is not None and not (sub and _text(sub, identities.MAX_LENGTH)):
            return self._malformed("sub", sub)
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
        # The local user linked to (issuer, subject), never one found by the name the
        # other server sends (affordances.mcp.identities); none for a token without a
        # subject (client credentials), which is no caller.
        user = None
        subject = identities.subject_of(content)
        if subject is not None:
            issuer = identities.issuer_of(content, introspection_url)
            user = identities.local_user(issuer, subject, content)
            if user is None:
                return None
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
