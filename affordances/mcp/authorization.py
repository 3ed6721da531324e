"""The MCP endpoints as OAuth 2.1 protected resources (MCP ``basic/authorization``).

Whatever authorization server issues the tokens (django-oauth-toolkit through
:mod:`affordances.mcp.oauth`, or any other one a DRF authentication class validates),
this module is the resource server's side, and depends on no OAuth library:

- **RFC 9728 metadata**: :func:`protected_resource_urls` serves
  ``/.well-known/oauth-protected-resource/<endpoint path>`` for every mounted
  :class:`~affordances.mcp.McpView` (and ``/.well-known/oauth-protected-resource`` for
  the origin), naming ``AFFORDANCES["MCP_AUTHORIZATION_SERVERS"]``;
- **challenges**: a 401 carries ``resource_metadata="…"`` and ``scope="…"`` (and
  ``error="invalid_token"`` for a bad token), a 403 ``error="insufficient_scope"``;
- **audience** (RFC 8707): a token naming resources is accepted only on an endpoint
  one of them covers (the endpoint's URL, a parent of it, or its origin);
- **scopes**: a token that carries scopes needs ``MCP_READ_SCOPE`` for any request and
  ``MCP_WRITE_SCOPE`` too to call a tool that is not read-only. A scope narrows, never
  widens: the user's Django permissions still decide each operation, and ``tools/list``
  is the user's, whatever the token's scopes.

All of it applies once ``MCP_AUTHORIZATION_SERVERS`` names a server; until then the
endpoints behave as before (``MCP_REQUIRE_AUDIENCE`` works on its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, URLPattern, re_path, resolve
from django.views import View

from affordances.conf import settings
from affordances.mcp.transport.http import InsufficientScope, NotAuthenticated

__all__ = [
    "ProtectedResourceMetadataView",
    "audiences",
    "granted_scopes",
    "protected_resource_urls",
]

WELL_KNOWN = "/.well-known/oauth-protected-resource"

# What a view class says to be an MCP endpoint this module describes (McpView does).
MARKER = "oauth_protected_resource"


def enabled() -> bool:
    """Whether the endpoints are OAuth protected resources (a server is configured)."""
    return bool(settings.MCP_AUTHORIZATION_SERVERS)


# --- URLs -----------------------------------------------------------------------------


def _origin(request: HttpRequest) -> str:
    return f"{request.scheme}://{request.get_host()}"


def resource_url(request: HttpRequest) -> str:
    """The endpoint's resource identifier: its absolute URL, without query."""
    return _origin(request) + request.path


def metadata_url(request: HttpRequest) -> str:
    """Where the endpoint's RFC 9728 metadata is (RFC 9728 §3.1: the well-known prefix
    inserted between the origin and the path)."""
    return _origin(request) + WELL_KNOWN + request.path


def authorization_servers(request: HttpRequest) -> list[str]:
    """The configured issuers, a path resolved against the request's origin."""
    origin = _origin(request)
    return [
        issuer if "://" in issuer else origin + issuer.rstrip("/")
        for issuer in settings.MCP_AUTHORIZATION_SERVERS
    ]


def scopes_supported() -> list[str]:
    return [s for s in (settings.MCP_READ_SCOPE, settings.MCP_WRITE_SCOPE) if s is not None]


# --- challenges -----------------------------------------------------------------------


def _quoted(value: str) -> str:
    # RFC 9110 §5.6.4 quoted-string; header values never hold CR or LF.
    value = value.replace("\r", "").replace("\n", "")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _bearer(base: str) -> str:
    """The bearer challenge to extend: the configured class's when it is one."""
    scheme, _, params = base.partition(" ")
    return base if scheme.lower() == "bearer" and params.strip() else "Bearer"


def _with(challenge: str, **params: str) -> str:
    rendered = ", ".join(f"{name}={_quoted(value)}" for name, value in params.items())
    if challenge.strip().lower() == "bearer":
        return f"{challenge} {rendered}"
    return f"{challenge}, {rendered}"


def challenge(request: HttpRequest, base: str) -> str:
    """A 401's challenge: ``resource_metadata`` and every scope an MCP client should ask
    for (MCP: SHOULD), after the configured class's own parameters (``realm``)."""
    if not enabled():
        return base
    params = {"resource_metadata": metadata_url(request)}
    scopes = " ".join(scopes_supported())
    if scopes:
        params["scope"] = scopes
    return _with(_bearer(base), **params)


def scope_challenge(request: HttpRequest, base: str, scope: str) -> str:
    """A 403's challenge for a missing scope (RFC 6750 §3.1; MCP step-up)."""
    return _with(
        _bearer(base),
        error="insufficient_scope",
        scope=scope,
        resource_metadata=metadata_url(request),
    )


# --- what a token says ----------------------------------------------------------------


def _claims(auth: Any) -> Mapping[str, Any] | None:
    # A JWT's claims: a mapping, or simplejwt's token (``payload``).
    if isinstance(auth, Mapping):
        return auth
    payload = getattr(auth, "payload", None)
    return payload if isinstance(payload, Mapping) else None


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def granted_scopes(auth: Any) -> frozenset[str] | None:
    """The scopes a credential carries, or None for a credential that carries none (a
    simplejwt token from ``/api/token/``, a DRF token): such a one is not narrowed.

    Read from ``auth.scope`` (django-oauth-toolkit's ``AccessToken``, space-separated)
    or from the ``scope`` (RFC 9068) or ``scp`` claim of a JWT.
    """
    scope = getattr(auth, "scope", None)
    if scope is None:
        claims = _claims(auth)
        if claims is not None:
            scope = claims.get("scope", claims.get("scp"))
    found = _strings(scope)
    return None if found is None else frozenset(found)


def audiences(auth: Any) -> tuple[str, ...] | None:
    """The resources a credential was issued for, or None when it names none.

    Read from ``auth.resource`` (django-oauth-toolkit's RFC 8707 resource indicators)
    or from a JWT's ``aud`` claim.
    """
    resource = getattr(auth, "resource", None)
    if resource is None:
        claims = _claims(auth)
        if claims is not None:
            resource = claims.get("aud")
    found = _strings(resource) if not isinstance(resource, str) else (resource,)
    return found or None


def _normalized(uri: str) -> tuple[str, str, str] | None:
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
        return None
    if parts.username is not None or parts.password is not None or parts.fragment:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname.lower()
    netloc = f"[{host}]" if ":" in host else host  # an IPv6 literal
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        netloc = f"{netloc}:{port}"
    return scheme, netloc, parts.path.rstrip("/")


def covers(audience: str, resource: str) -> bool:
    """Whether a token issued for ``audience`` may be used at ``resource``: the same
    origin, and the audience's path the resource's or a parent of it (segment-wise)."""
    issued, used = _normalized(audience), _normalized(resource)
    if issued is None or used is None or issued[:2] != used[:2]:
        return False
    return used[2] == issued[2] or used[2].startswith(issued[2] + "/")


def check_token(request: HttpRequest, auth: Any) -> None:
    """Refuse a token issued for another resource (401 ``invalid_token``) or one without
    the read scope (403 ``insufficient_scope``)."""
    oauth = enabled()
    if oauth or settings.MCP_REQUIRE_AUDIENCE:
        named = audiences(auth)
        if named is None:
            if settings.MCP_REQUIRE_AUDIENCE:
                raise NotAuthenticated
        elif not any(covers(audience, resource_url(request)) for audience in named):
            raise NotAuthenticated
    if not oauth:
        return
    read = settings.MCP_READ_SCOPE
    scopes = granted_scopes(auth)
    if scopes is not None and read is not None and read not in scopes:
        raise InsufficientScope(" ".join(scopes_supported()))


def check_tool(request: Any, read_only: Callable[[], bool]) -> None:
    """Before ``tools/call``: a tool that is not read-only needs the write scope."""
    write = settings.MCP_WRITE_SCOPE
    if not enabled() or write is None:
        return
    scopes = granted_scopes(getattr(request, "auth", None))
    if scopes is None or write in scopes or read_only():
        return
    raise InsufficientScope(" ".join(scopes_supported()))


# --- RFC 9728 metadata ----------------------------------------------------------------


def _json(status: int, body: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(body, status=status)
    # Public metadata: any origin may read it (browser-based hosts discover with it).
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "no-store" if status >= 400 else "public, max-age=300"
    return response


def _not_found() -> JsonResponse:
    return _json(
        404, {"error": "not_found", "error_description": "No protected resource at this path."}
    )


class ProtectedResourceMetadataView(View):
    """RFC 9728 protected-resource metadata of an MCP endpoint (or of the origin)."""

    http_method_names = ["get", "head", "options"]

    def options(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = HttpResponse(status=204)
        response["Allow"] = "GET, HEAD, OPTIONS"
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = "GET"
        response["Access-Control-Allow-Headers"] = "MCP-Protocol-Version"
        response["Access-Control-Max-Age"] = "600"
        return response

    def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        response = _json(405, {"error": "method_not_allowed", "error_description": "Use GET."})
        response["Allow"] = "GET, HEAD, OPTIONS"
        return response

    def get(self, request: HttpRequest, resource_path: str | None = None) -> JsonResponse:
        try:
            servers = authorization_servers(request)
        except ImproperlyConfigured:  # reported by the system check (affordances.E030)
            servers = []
        if not servers:
            return _not_found()
        origin = _origin(request)
        document: dict[str, Any] = {}
        if resource_path:
            profile = _endpoint(resource_path)
            if profile is None:
                return _not_found()
            document["resource"] = origin + resource_path
            title = getattr(profile, "title", None)
            if isinstance(title, str) and title:
                document["resource_name"] = title
        else:
            document["resource"] = origin
        document["authorization_servers"] = servers
        scopes = scopes_supported()
        if scopes:
            document["scopes_supported"] = scopes
        document["bearer_methods_supported"] = ["header"]
        return _json(200, document)


class _NoProfile:
    title = None


def _endpoint(path: str) -> Any | None:
    """The profile of the MCP endpoint mounted at ``path`` (a stand-in without one), or
    None when nothing there is an MCP endpoint."""
    if "\x00" in path or len(path) > 2048:
        return None
    try:
        match = resolve(path)
    except (Resolver404, ValueError):
        return None
    view_class = getattr(match.func, "view_class", None)
    if view_class is None or not getattr(view_class, MARKER, False):
        return None
    initkwargs = getattr(match.func, "view_initkwargs", {}) or {}
    return initkwargs.get("profile", getattr(view_class, "profile", _NoProfile()))


def protected_resource_urls() -> list[URLPattern]:
    """The RFC 9728 well-known URLs, for the project's root URLconf::

    urlpatterns = [*protected_resource_urls(), ...]

    ``/.well-known/oauth-protected-resource/<path>`` describes the MCP endpoint at
    ``/<path>`` (404 for any other path), ``/.well-known/oauth-protected-resource`` the
    origin. Both are 404 until ``AFFORDANCES["MCP_AUTHORIZATION_SERVERS"]`` names a
    server.
    """
    return [
        re_path(
            r"^\.well-known/oauth-protected-resource(?P<resource_path>/.*)?$",
            ProtectedResourceMetadataView.as_view(),
            name="oauth-protected-resource",
        )
    ]
