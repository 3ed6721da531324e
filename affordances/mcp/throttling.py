"""Rate limits on the authorization server's open doors: registration and the token endpoint.

Both take anonymous requests, and both cost the server work an attacker does not pay
for: a registration writes an application and a registration token, a token request
with a client secret hashes it. Each is limited per client address
(``AFFORDANCES["OAUTH_THROTTLE_RATES"]``: ``register`` and ``token``), counted in
Django's default cache by DRF's :class:`~rest_framework.throttling.SimpleRateThrottle`
— the same mechanism and cache as a project's throttles on its own token endpoints.
With several processes the cache must be a shared one (Redis, the database), or each
process counts on its own. The client address is DRF's: ``REMOTE_ADDR``, or the one
``REST_FRAMEWORK["NUM_PROXIES"]`` says behind proxies.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.throttling import SimpleRateThrottle

from affordances.conf import settings

__all__ = ["OAuthRateThrottle", "throttled"]


class OAuthRateThrottle(SimpleRateThrottle):
    """Requests per client address to one endpoint (``register`` or ``token``)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.scope = f"oauth_{endpoint}"
        super().__init__()

    def get_rate(self) -> str | None:
        # Read on every request: override_settings and a reloaded configuration apply.
        return settings.OAUTH_THROTTLE_RATES.get(self.endpoint)

    def get_cache_key(self, request: Any, view: Any) -> str:
        return str(self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)})


def throttled(request: HttpRequest, endpoint: str) -> HttpResponse | None:
    """A 429 answer when ``request`` is over ``endpoint``'s rate, else None (counted)."""
    throttle = OAuthRateThrottle(endpoint)
    # DRF's throttles read only META (the address) of a request, and no view.
    plain: Any = request
    no_view: Any = None
    if throttle.rate is None or throttle.allow_request(plain, no_view):
        return None
    response = JsonResponse(
        {
            # RFC 6749 and RFC 7591 have no code of their own for this.
            "error": "invalid_request",
            "error_description": "Too many requests from this address. Try again later.",
        },
        status=429,
    )
    wait = throttle.wait()
    if wait is not None:
        response["Retry-After"] = str(max(1, round(wait)))
    response["Cache-Control"] = "no-store"
    return response
