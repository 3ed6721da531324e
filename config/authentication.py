"""Bearer tokens that fail as 401s, never as 500s, and token responses no cache keeps.

simplejwt looks the user up with whatever the token's user id claim holds and lets the
lookup's errors through: a validly signed token naming a deleted user (on refresh,
simplejwt #860) or an id that is no id at all (``"abc"``, a list) ends in a 500. Here
each of those is an ``AuthenticationFailed``, which the project's ``EXCEPTION_HANDLER``
renders as a 401 problem like every other failed authentication.

The token endpoints' answers carry ``Cache-Control: no-store`` (RFC 6749 §5.1): a token
must not stay in a browser's or a proxy's cache.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext_lazy as _
from drf_spectacular.contrib.rest_framework_simplejwt import (
    SimpleJWTScheme,
    TokenRefreshSerializerExtension,
)
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework_simplejwt import authentication, serializers
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import Token

__all__ = ["JWTAuthentication", "NoStoreMixin", "TokenRefreshSerializer"]

# What a lookup by a malformed id raises: ValueError/TypeError for integer keys,
# ValidationError for UUID keys.
_MALFORMED_ID_ERRORS = (ValueError, TypeError, DjangoValidationError)


def _is_user_id(value: object) -> bool:
    # simplejwt writes the id as a string (older versions an int as an int); JSON true or
    # 1.5 would otherwise be read as the user with pk 1.
    return isinstance(value, int | str) and not isinstance(value, bool)


_NOT_FOUND = _("User not found")


class JWTAuthentication(authentication.JWTAuthentication):
    """simplejwt's bearer authentication; a token naming no valid user id is a 401."""

    def get_user(self, validated_token: Token) -> Any:
        claim = api_settings.USER_ID_CLAIM
        if claim in validated_token and not _is_user_id(validated_token[claim]):
            raise AuthenticationFailed(_NOT_FOUND, code="user_not_found")
        try:
            return super().get_user(validated_token)
        except _MALFORMED_ID_ERRORS:
            raise AuthenticationFailed(_NOT_FOUND, code="user_not_found") from None


class TokenRefreshSerializer(serializers.TokenRefreshSerializer):
    """A refresh token's user must still exist and be active (simplejwt #860)."""

    def validate(self, attrs: dict[str, Any]) -> dict[str, str]:
        # One answer for deleted, inactive and malformed: which one is not said.
        failed = AuthenticationFailed(self.error_messages["no_active_account"], "no_active_account")
        user_id = self.token_class(attrs["refresh"]).payload.get(api_settings.USER_ID_CLAIM)
        # Upstream checks no user at all for a missing or falsy id.
        if not user_id or not _is_user_id(user_id):
            raise failed
        try:
            # Inactive users are refused in there already.
            return super().validate(attrs)
        except (get_user_model().DoesNotExist, *_MALFORMED_ID_ERRORS):
            raise failed from None


class NoStoreMixin:
    """``Cache-Control: no-store`` on every answer of a token endpoint, errors included."""

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        response["Cache-Control"] = "no-store"
        # RFC 6749 §5.1 asks for both; Pragma is for HTTP/1.0 caches.
        response["Pragma"] = "no-cache"
        return response


# drf-spectacular matches its simplejwt extensions by exact class: without these the
# OpenAPI document would lose the bearer scheme and the refresh body.
class _JWTScheme(SimpleJWTScheme):
    target_class = "config.authentication.JWTAuthentication"


class _TokenRefreshSerializerExtension(TokenRefreshSerializerExtension):
    target_class = "config.authentication.TokenRefreshSerializer"
