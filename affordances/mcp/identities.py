"""Who a token of another authorization server stands for, here.

In resource-server mode (RFC 7662 introspection, ``affordances.mcp.oauth.OAuth2Validator``)
django-oauth-toolkit took the answer's ``username`` as a local username and created the
user if there was none: an answer ``{"active": true, "username": "admin"}`` was the
local superuser. The other server's names are its own; here a token maps to a local user
only through :class:`~affordances.models.OAuthIdentity`, by the pair (issuer, subject):

- the **issuer** is the answer's ``iss``, or, without one, the origin of
  ``RESOURCE_SERVER_INTROSPECTION_URL`` (``https://as.example``);
- the **subject** is the answer's ``sub``, or, without one, its ``username`` (the other
  server's identifier, not a local one);
- a **linked** pair is its user, whoever that is — an operator linked it on purpose
  (the admin, or ``OAuthIdentity.objects.create(issuer=…, subject=…, user=…)``);
- an **unlinked** pair is refused (the token is treated as inactive: 401), unless
  ``AFFORDANCES["OAUTH_CREATE_USERS"]`` is on: then a new local user is created for it
  (no password, no staff, no permissions, no groups) and linked — never an account that
  already exists under that name, which stays refused until linked on purpose.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from affordances.conf import settings
from affordances.models import OAuthIdentity

__all__ = ["issuer_of", "local_user", "subject_of"]

log = logging.getLogger("affordances.mcp.oauth")

MAX_LENGTH = 255


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value and "\x00" not in value and len(value) <= MAX_LENGTH:
        return value
    return None


def issuer_of(content: dict[str, Any], introspection_url: str) -> str:
    issuer = _text(content.get("iss"))
    if issuer is not None:
        return issuer
    parts = urlsplit(introspection_url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def subject_of(content: dict[str, Any]) -> str | None:
    return _text(content.get("sub")) or _text(content.get("username"))


def local_user(issuer: str, subject: str, content: dict[str, Any]) -> Any | None:
    """The local user (issuer, subject) stands for, or None: refuse the token."""
    link = OAuthIdentity.objects.filter(issuer=issuer, subject=subject).select_related("user")
    found = link.first()
    if found is not None:
        return found.user
    if not settings.OAUTH_CREATE_USERS:
        log.warning(
            "Introspection: no local user is linked to %r at %r; refusing its token "
            "(link one with an OAuthIdentity, or set OAUTH_CREATE_USERS).",
            subject,
            issuer,
        )
        return None
    user_model = get_user_model()
    username = _text(content.get("username")) or subject
    max_length = getattr(user_model._meta.get_field(user_model.USERNAME_FIELD), "max_length", None)
    if max_length is not None and len(username) > max_length:
        return None
    if user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).exists():
        log.warning(
            "Introspection: %r at %r names the existing local account %r; refusing its "
            "token until an operator links them.",
            subject,
            issuer,
            username,
        )
        return None
    try:
        with transaction.atomic():
            user = user_model(**{user_model.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
            OAuthIdentity.objects.create(issuer=issuer, subject=subject, user=user)
    except IntegrityError:  # a concurrent first request created it: use its link
        found = link.first()
        return None if found is None else found.user
    return user
