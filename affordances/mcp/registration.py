"""Dynamic client registration (RFC 7591) and its updates (RFC 7592), under one policy.

django-oauth-toolkit's endpoints, with what a public MCP server needs on top:

- **one policy for POST and PUT** (:func:`refusal`), and for Client ID Metadata
  Documents (affordances.mcp.cimd): the authorization code grant only
  (``refresh_token`` beside it), response type ``code``; a redirect URI is ``https``,
  or ``http`` on a loopback address (127.0.0.1, ::1, localhost — RFC 8252 §7.3, where
  desktop hosts receive the answer, as the MCP authorization spec allows), on a host of
  ``AFFORDANCES["OAUTH_REDIRECT_HOSTS"]`` when that is set; no control character in a
  name or a URI (PostgreSQL refuses NUL: it was a 500). An update (RFC 7592 ``PUT``)
  meets the same policy as the registration, and may not turn a public client into a
  confidential one or back (the secret would be missing, or left behind);
- **a public client pays no hashing**: a client registering with
  ``token_endpoint_auth_method: "none"`` has no secret, so none is generated and hashed
  (django-oauth-toolkit hashed one anyway, a second of CPU per anonymous request);
- **rate limits** per client address (:mod:`affordances.mcp.throttling`);
- **registration tokens that expire**: after
  ``OAUTH2_PROVIDER["DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS"]``, or 30 days when that is
  None (django-oauth-toolkit's None meant the year 9999);
- bounded bodies, ``Cache-Control: no-store``.

Clients that registered and never obtained a token, and expired registration tokens,
are deleted by ``manage.py expire_oauth_clients`` (docs/howto/deploy.md).
"""

from __future__ import annotations

import json
import unicodedata
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from affordances.compat.oauth_toolkit import (
    application_kwargs,
    application_to_response,
    error_response,
    issue_registration_token,
    registration_permitted,
    validation_error_description,
)
from affordances.conf import settings
from affordances.mcp.throttling import throttled

__all__ = [
    "RegistrationManagementView",
    "RegistrationView",
    "admit_loopback",
    "clean_text",
    "loopback",
    "loopback_http",
    "redirect_host_allowed",
    "refusal",
    "refused",
]

# RFC 7591 values an MCP client registers with: the authorization code grant (and the
# refresh tokens that come with it), nothing else.
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})
RESPONSE_TYPES = frozenset({"code"})
# A registration request is a small JSON document.
MAX_REGISTRATION_BYTES = 64 * 1024

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
# How long an RFC 7592 registration token lives unless
# OAUTH2_PROVIDER["DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS"] says.
REGISTRATION_TOKEN_TTL = timedelta(days=30)


INVALID = "invalid_client_metadata"


def _error(description: str, error: str = INVALID) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=400)
    response["Cache-Control"] = "no-store"
    return response


def clean_text(value: Any) -> bool:
    # No control character (Unicode category Cc: C0, DEL, C1): NUL is refused by
    # PostgreSQL, and the others have no place in a name shown on the consent page or in
    # a URI (RFC 3986 has none).
    return isinstance(value, str) and not any(unicodedata.category(c) == "Cc" for c in value)


def loopback(host: str | None) -> bool:
    return host in LOOPBACK


def redirect_host_allowed(uri: str) -> bool:
    """Whether ``uri``'s host is one ``OAUTH_REDIRECT_HOSTS`` allows (any, unset; a
    loopback address always: the answer stays on the user's machine)."""
    allowed = settings.OAUTH_REDIRECT_HOSTS
    try:
        host = (urlsplit(uri).hostname or "").lower()
    except ValueError:
        return False
    if allowed is None or loopback(host):
        return True
    return any(
        host == entry or (entry.startswith(".") and (host == entry[1:] or host.endswith(entry)))
        for entry in allowed
    )


def _https_or_loopback(uri: str) -> bool:
    """RFC 9700 §2.1 with RFC 8252 §7.3's exception: plaintext http only to a loopback
    address. Other schemes are left to ``OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"]``."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return True  # django-oauth-toolkit refuses it
    return parts.scheme.lower() != "http" or loopback(host)


def loopback_http(uri: str) -> bool:
    """Whether ``uri`` is an http URI on a loopback address."""
    try:
        parts = urlsplit(uri)
        return parts.scheme.lower() == "http" and loopback(parts.hostname)
    except ValueError:
        return False


def admit_loopback(application: Any) -> None:
    """Let ``application``'s validation take http on loopback addresses, which the
    policy admitted (and nothing else over http: :func:`refusal` ran first), whatever
    ``ALLOWED_REDIRECT_URI_SCHEMES`` says: it can stay ``["https"]``, and django-oauth-
    toolkit's deploy check (oauth2_provider.W008) silent."""
    schemes = list(application.get_allowed_schemes())
    if "http" not in schemes and any(
        loopback_http(uri) for uri in (application.redirect_uris or "").split()
    ):
        application.get_allowed_schemes = lambda: [*schemes, "http"]


def _values(data: dict[str, Any], key: str, default: list[str]) -> list[Any] | None:
    value = data.get(key, default)
    return value if isinstance(value, list) else None


def refused(data: Any) -> tuple[str, str] | None:
    """The policy's ``(error, description)`` for client metadata it refuses, or None.

    One rule for every way a client describes itself: a registration (``POST``), its
    update (``PUT``), and a Client ID Metadata Document (affordances.mcp.cimd)."""
    if not isinstance(data, dict):
        return INVALID, "Send the client metadata as a JSON object."
    grant_types = _values(data, "grant_types", ["authorization_code"])
    if grant_types is None or not set(grant_types) <= GRANT_TYPES:
        return INVALID, "grant_types may hold only authorization_code and refresh_token."
    if "authorization_code" not in grant_types:
        return INVALID, "grant_types must hold authorization_code."
    response_types = _values(data, "response_types", ["code"])
    if response_types is None or not set(response_types) <= RESPONSE_TYPES:
        return INVALID, "response_types may hold only code."
    name = data.get("client_name", "")
    if not clean_text(name):
        return INVALID, "client_name is a text without control characters."
    uris = data.get("redirect_uris")
    if isinstance(uris, list):
        if not all(clean_text(uri) for uri in uris):
            return INVALID, "A redirect URI is a text without control characters."
        if not all(_https_or_loopback(uri) for uri in uris):
            return (
                "invalid_redirect_uri",
                "A redirect URI is https, or http on a loopback address (RFC 8252 §7.3).",
            )
        if not all(redirect_host_allowed(uri) for uri in uris):
            return (
                "invalid_redirect_uri",
                "A redirect URI names a host this server does not send codes to.",
            )
    return None


def refusal(data: Any) -> JsonResponse | None:
    """The 400 answer for client metadata the policy refuses (:func:`refused`), or None
    to go on."""
    reason = refused(data)
    return None if reason is None else _error(reason[1], error=reason[0])


def _metadata(request: HttpRequest) -> tuple[Any, JsonResponse | None]:
    if len(request.body) > MAX_REGISTRATION_BYTES:
        return None, _error("The registration request is too large.")
    try:
        data = json.loads(request.body)
    except ValueError:
        return None, _error("Send the client metadata as a JSON object.")
    return data, refusal(data)


def _no_store(response: HttpResponse) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    return response


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationView(DynamicClientRegistrationView):  # type: ignore[misc]
    """django-oauth-toolkit's RFC 7591 registration endpoint under :func:`refusal`'s
    policy, rate-limited, and without a secret (nor its hashing) for a public client."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        limited = throttled(request, "register")
        if limited is not None:
            return limited
        if not registration_permitted(request):
            return _no_store(
                error_response(
                    "access_denied", "Authentication required to register a client", status=401
                )
            )
        data, refused = _metadata(request)
        if refused is not None:
            return refused
        app_kwargs, error = application_kwargs(data)
        if error:
            return _no_store(error)
        application_model = get_application_model()
        user = request.user if request.user.is_authenticated else None
        public = app_kwargs["client_type"] == application_model.CLIENT_PUBLIC
        if public:
            # No secret to authenticate with, none to store: "" unhashed is what a
            # secret-less client is (a request presenting any secret fails against it).
            app_kwargs.update(client_secret="", hash_client_secret=False)
        application = application_model(
            user=user, registration_source=application_model.RegistrationSource.DCR, **app_kwargs
        )
        raw_secret = None if public else application.client_secret
        admit_loopback(application)
        try:
            application.full_clean()
        except Exception as exc:  # ValidationError, as django-oauth-toolkit answers it
            if not hasattr(exc, "messages"):
                raise
            return _error(validation_error_description(exc))
        with transaction.atomic():
            application.save()
            token = issue_registration_token(application, user)
            if oauth2_settings.DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS is None:
                # django-oauth-toolkit's default is the year 9999: a credential kept
                # forever for every anonymous registration.
                get_access_token_model().objects.filter(
                    application=application, scope=oauth2_settings.DCR_REGISTRATION_SCOPE
                ).update(expires=timezone.now() + REGISTRATION_TOKEN_TTL)
        body = application_to_response(application, token, request)
        if raw_secret:
            body["client_secret"] = raw_secret
        return _no_store(JsonResponse(body, status=201))


@method_decorator(csrf_exempt, name="dispatch")
class RegistrationManagementView(DynamicClientRegistrationManagementView):  # type: ignore[misc]
    """django-oauth-toolkit's RFC 7592 client configuration endpoint: an update (``PUT``)
    meets the registration's policy (:func:`refusal`), and keeps the client's type."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        limited = throttled(request, "register")
        if limited is not None:
            return limited
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        data, refused = _metadata(request)
        if refused is not None:
            return refused
        method = data.get("token_endpoint_auth_method", "client_secret_basic")
        public = auth.application.client_type == get_application_model().CLIENT_PUBLIC
        if (method == "none") != public:
            return _error("token_endpoint_auth_method cannot change: register a new client.")
        return _no_store(super().put(request, client_id, *args, **kwargs))

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return _no_store(super().get(request, *args, **kwargs))

    def _authenticate_registration_request(self, request: HttpRequest, client_id: str) -> Any:
        auth = super()._authenticate_registration_request(request, client_id)
        if not isinstance(auth, HttpResponse) and request.method == "PUT":
            # The update's URIs passed refusal(); the model validates them after they
            # are set on it: admit loopback http once they are.
            application = auth.application
            original = application.full_clean

            def full_clean(*args: Any, **kwargs: Any) -> None:
                admit_loopback(application)
                original(*args, **kwargs)

            application.full_clean = full_clean
        return auth
