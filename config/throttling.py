"""Rate limits on the ways in: the JWT endpoints and the session logins.

Each counts attempts per client address in Django's cache under DRF's scope ``auth``
(``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth"]``, from ``AUTH_THROTTLE_RATE``).
Only these endpoints are limited: everything else needs a token or a session first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework_simplejwt.views import TokenObtainPairView, TokenRefreshView

from config.authentication import NoStoreMixin

__all__ = [
    "AuthRateThrottle",
    "ThrottledTokenObtainPairView",
    "ThrottledTokenRefreshView",
    "throttled_admin_login",
    "throttled_api_login",
]


class AuthRateThrottle(SimpleRateThrottle):
    """Authentication attempts per client address (the requests carry no identity yet)."""

    scope = "auth"

    def get_rate(self) -> str | None:
        # DRF binds THROTTLE_RATES at import; read the setting now so that a changed
        # setting (override_settings, a reloaded configuration) takes effect.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


@extend_schema_view(post=extend_schema(summary="Obtain an access and a refresh token"))
class ThrottledTokenObtainPairView(NoStoreMixin, TokenObtainPairView):
    """``POST /api/token/``, rate-limited per client address; answers are not cached."""

    throttle_classes = [AuthRateThrottle]


@extend_schema_view(post=extend_schema(summary="Exchange a refresh token for a new access token"))
class ThrottledTokenRefreshView(NoStoreMixin, TokenRefreshView):
    """``POST /api/token/refresh/``, rate-limited per client address; answers are not cached."""

    # Its serializer is SIMPLE_JWT["TOKEN_REFRESH_SERIALIZER"] (config.authentication).
    throttle_classes = [AuthRateThrottle]


def _throttled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Limit the POSTs (the login attempts) of a Django login view; GET shows the form."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST":
            throttle = AuthRateThrottle()
            if not throttle.allow_request(request, None):
                wait = throttle.wait()
                response = HttpResponse(
                    "Too many login attempts. Try again later.\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                if wait is not None:
                    response["Retry-After"] = str(max(1, round(wait)))
                return response
        return view(request, *args, **kwargs)

    return wrapped


def _admin_login(request: HttpRequest) -> HttpResponse:
    return admin.site.login(request)


# Mounted on the same paths as the originals, before them, so reverse("admin:login")
# and reverse("rest_framework:login") still name these paths.
throttled_admin_login = _throttled(_admin_login)
throttled_api_login = _throttled(LoginView.as_view(template_name="affordances/rest/login.html"))
