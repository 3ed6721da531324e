"""The consent page: what the person is agreeing to, and where the answer goes.

django-oauth-toolkit's page asked "Authorize <name>?", the name being whatever the
client registered itself as: a client named "Claude" redirecting to
``https://attacker.example/cb`` looked like Claude. :class:`AuthorizationView` shows
what is at stake, in the admin's login style (``affordances/oauth/authorize.html``):

- the **host the answer is sent to** (the redirect URI's), prominently;
- that the client **registered itself and is unverified** (dynamic registration, RFC
  7591, or a metadata document), and when — its name is its own claim;
- the **resource** (RFC 8707) the token will be good for, and each scope in words
  (``OAUTH2_PROVIDER["SCOPES"]``'s descriptions);
- for a client described by a **Client ID Metadata Document** (its ``client_id`` an
  https URL), the **host that published it** — this server fetched it there, so the
  host is real where the name is a claim. The document is fetched here, once the person
  has logged in (affordances.mcp.cimd); one that cannot be used is a 400 page saying
  why (``invalid_client``), never a redirect.

With ``AFFORDANCES["OAUTH_REDIRECT_HOSTS"]`` set, a code is never sent to a host
outside it (a 400 page instead of a redirect), whenever the client registered.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse
from oauth2_provider import views as dot_views
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.models import get_application_model

from affordances.mcp import cimd
from affordances.mcp.registration import loopback_http, redirect_host_allowed

__all__ = ["AuthorizationView"]


def _host(uri: str) -> str:
    try:
        parts = urlsplit(uri)
        return parts.netloc.rpartition("@")[2] or uri
    except ValueError:
        return uri


class AuthorizationView(dot_views.AuthorizationView):  # type: ignore[misc]
    """django-oauth-toolkit's authorization endpoint with a consent page that names the
    redirect host, the client's standing, the resource and the scopes."""

    template_name = "affordances/oauth/authorize.html"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        uri = request.GET.get("redirect_uri")
        if uri is not None and not redirect_host_allowed(uri):
            return self._refused(uri)
        client_id = request.GET.get("client_id")
        if cimd.applies(client_id):
            # Fetched (or refreshed) before django-oauth-toolkit looks the client up,
            # so that a refusal can say why rather than "unknown client".
            try:
                cimd.resolve(client_id, request)
            except cimd.CIMDError as error:
                return self._document_refused(client_id, error)
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        # Every redirect of this endpoint (a code, an error, a skipped consent) goes
        # through here: none to a host outside OAUTH_REDIRECT_HOSTS.
        if not redirect_host_allowed(redirect_to):
            return self._refused(redirect_to)
        if application is not None and loopback_http(redirect_to):
            # A loopback URI the registration admitted (affordances.mcp.registration),
            # whether or not ALLOWED_REDIRECT_URI_SCHEMES names http.
            schemes = [*application.get_allowed_schemes(), "http"]
            answer: HttpResponse = OAuth2ResponseRedirect(redirect_to, schemes)
            return answer
        response: HttpResponse = super().redirect(redirect_to, application)
        return response

    def _refused(self, uri: str) -> HttpResponse:
        error = {
            "error": "invalid_request",
            "description": f"This server does not send authorization codes to {_host(uri)}.",
        }
        response: HttpResponse = self.render_to_response({"error": error}, status=400)
        return response

    def _document_refused(self, client_id: str, reason: Exception) -> HttpResponse:
        shown = client_id if len(client_id) <= 200 else client_id[:200] + "…"
        error = {
            "error": "invalid_client",
            "description": (
                f"The client's metadata document {shown} cannot be used: {str(reason).rstrip('.')}."
            ),
        }
        response: HttpResponse = self.render_to_response({"error": error}, status=400)
        response["Cache-Control"] = "no-store"
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        application = context.get("application")
        redirect_uri = context.get("redirect_uri") or ""
        context["redirect_host"] = _host(redirect_uri) if redirect_uri else ""
        context["redirect_scheme"] = redirect_uri.partition(":")[0].lower()
        sources = get_application_model().RegistrationSource
        context["self_registered"] = application is not None and (
            application.registration_source in {sources.DCR, sources.CIMD}
        )
        context["resources"] = (context.get("resource") or "").split()
        # The host that published the client's metadata document: where it comes from.
        context["client_host"] = (
            _host(application.client_id)
            if application is not None and application.registration_source == sources.CIMD
            else ""
        )
        return context
