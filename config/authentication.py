"""Bearer tokens that fail as 401s, never as 500s, and that die with the credentials.

simplejwt looks the user up with whatever the token's user id claim holds and lets the
lookup's errors through: a validly signed token naming a deleted user (on refresh,
simplejwt #860) or an id that is no id at all (``"abc"``, a list) ends in a 500. Here
each of those is an ``AuthenticationFailed``, which the project's ``EXCEPTION_HANDLER``
renders as a 401 problem like every other failed authentication.

The same goes for the registered claims: simplejwt hands ``exp`` to
``datetime.fromtimestamp`` unchecked, so a token signed with the real key whose ``exp``
is a string, ``1e300`` or after the year 9999 was a 500. :class:`AccessToken` and
:class:`RefreshToken` refuse such a token (and a non-number ``iat``/``nbf``, or a
``jti`` the blacklist cannot store) as invalid.

A token is bound to the password it was issued under (``SIMPLE_JWT["CHECK_REVOKE_TOKEN"]``:
simplejwt puts a hash of the user's stored password hash in it, and
``JWTAuthentication`` compares it on every request). simplejwt does not compare it on
refresh; :class:`TokenRefreshSerializer` does, and makes every refresh token single-use
(``ROTATE_REFRESH_TOKENS`` + ``BLACKLIST_AFTER_ROTATION``, the ``token_blacklist`` app),
even for two requests racing with the same token.

The token endpoints' answers carry ``Cache-Control: no-store`` (RFC 6749 §5.1): a token
must not stay in a browser's or a proxy's cache.
"""

from __future__ import annotations

import hmac
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
from rest_framework_simplejwt import authentication, serializers, tokens
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import Token
from rest_framework_simplejwt.utils import datetime_from_epoch, get_md5_hash_password

__all__ = [
    "AccessToken",
    "JWTAuthentication",
    "NoStoreMixin",
    "RefreshToken",
    "TokenRefreshSerializer",
]

# What a lookup by a malformed id raises: ValueError/TypeError for integer keys,
# ValidationError for UUID keys.
_MALFORMED_ID_ERRORS = (ValueError, TypeError, DjangoValidationError)

# RFC 7519 NumericDates: simplejwt reads exp as a datetime; PyJWT reads iat and nbf with
# int(), which takes true as 1 and any far past.
_TIME_CLAIMS = ("exp", "iat", "nbf")
# OutstandingToken.jti is a CharField(max_length=255): a longer or null id would be a
# database error when the refresh token is blacklisted.
_MAX_JTI_LENGTH = 255


def _is_numeric_date(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        # What fromtimestamp raises out of range differs per platform.
        datetime_from_epoch(value)
    except (OverflowError, ValueError, OSError):
        return False
    return True


def _is_jti(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= _MAX_JTI_LENGTH


class _WellFormedClaims:
    """Refuse, as an invalid token, registered claims simplejwt would choke on."""

    payload: dict[str, Any]

    def verify(self) -> None:
        invalid = TokenError(_("Token is invalid"))
        if any(
            claim in self.payload and not _is_numeric_date(self.payload[claim])
            for claim in _TIME_CLAIMS
        ):
            raise invalid
        jti = api_settings.JTI_CLAIM
        if jti is not None and jti in self.payload and not _is_jti(self.payload[jti]):
            raise invalid
        try:
            super().verify()  # type: ignore[misc]
        except (TypeError, ValueError, OverflowError, OSError):
            raise invalid from None


class AccessToken(_WellFormedClaims, tokens.AccessToken):
    """simplejwt's access token, malformed claims refused (``AUTH_TOKEN_CLASSES``)."""


class RefreshToken(_WellFormedClaims, tokens.RefreshToken):
    """simplejwt's refresh token, malformed claims refused."""

    access_token_class = AccessToken


def _is_user_id(value: object) -> bool:
    # simplejwt writes the id as a string (older versions an int as an int); JSON true or
    # 1.5 would otherwise be read as the user with pk 1.
    return isinstance(value, int | str) and not isinstance(value, bool)


def _user_of(token: Token) -> Any | None:
    """The user a token names, or None if it names none (missing, malformed, deleted)."""
    user_id = token.payload.get(api_settings.USER_ID_CLAIM)
    # Upstream checks no user at all for a missing or falsy id.
    if not user_id or not _is_user_id(user_id):
        return None
    user_model = get_user_model()
    try:
        return user_model.objects.get(**{api_settings.USER_ID_FIELD: user_id})
    except (user_model.DoesNotExist, *_MALFORMED_ID_ERRORS):
        return None


def _issued_under_current_password(token: Token, user: Any) -> bool:
    """What ``JWTAuthentication.get_user`` checks with ``CHECK_REVOKE_TOKEN``."""
    if not api_settings.CHECK_REVOKE_TOKEN:
        return True
    claim = token.payload.get(api_settings.REVOKE_TOKEN_CLAIM)
    current = get_md5_hash_password(user.password)
    return isinstance(claim, str) and hmac.compare_digest(claim, current)


_NOT_FOUND = _("User not found")


class JWTAuthentication(authentication.JWTAuthentication):
    """simplejwt's bearer authentication; a token naming no valid user id is a 401.

    simplejwt's ``get_user`` refuses an inactive user (``CHECK_USER_IS_ACTIVE``) and a
    token issued under another password (``CHECK_REVOKE_TOKEN``).
    """

    def get_raw_token(self, header: bytes) -> bytes | None:
        # RFC 9110 §11.1: the scheme is case-insensitive ("bearer", "BEARER"); simplejwt
        # compares it byte for byte, so another spelling was a missing credential.
        parts = header.split()
        if parts:
            spelled = {scheme.lower(): scheme for scheme in authentication.AUTH_HEADER_TYPE_BYTES}
            parts[0] = spelled.get(parts[0].lower(), parts[0])
        return super().get_raw_token(b" ".join(parts))

    def get_user(self, validated_token: Token) -> Any:
        claim = api_settings.USER_ID_CLAIM
        if claim in validated_token and not _is_user_id(validated_token[claim]):
            raise AuthenticationFailed(_NOT_FOUND, code="user_not_found")
        try:
            return super().get_user(validated_token)
        except _MALFORMED_ID_ERRORS:
            raise AuthenticationFailed(_NOT_FOUND, code="user_not_found") from None


class TokenRefreshSerializer(serializers.TokenRefreshSerializer):
    """A refresh token's user must still exist, be active and have the password the
    token was issued under (simplejwt #860; simplejwt checks none of the last on
    refresh). With rotation each refresh token is used once: the one sent is
    blacklisted, and a second use — even concurrent — is refused.
    """

    token_class = RefreshToken

    def validate(self, attrs: dict[str, Any]) -> dict[str, str]:
        refresh = self.token_class(attrs["refresh"])
        user = _user_of(refresh)
        if (
            user is None
            or not api_settings.USER_AUTHENTICATION_RULE(user)
            or not _issued_under_current_password(refresh, user)
        ):
            # One answer for deleted, inactive, malformed and revoked: which is not said.
            raise AuthenticationFailed(
                self.error_messages["no_active_account"], "no_active_account"
            )

        data = {"access": str(refresh.access_token)}
        if api_settings.ROTATE_REFRESH_TOKENS:
            if api_settings.BLACKLIST_AFTER_ROTATION:
                # get_or_create: only the request that blacklisted it may rotate it.
                # (Without the token_blacklist app this is an AttributeError: refusing
                # to run beats refresh tokens silently reusable.)
                blacklisted: Any = refresh.blacklist()
                if not blacklisted[1]:
                    raise TokenError(_("Token is blacklisted"))
            refresh.set_jti()
            refresh.set_exp()
            refresh.set_iat()
            refresh.outstand()
            data["refresh"] = str(refresh)
        return data


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
