"""A person ends every session they started: the one rule for every credential.

**A credential dies with the password it was issued under, and with its user's
deactivation or deletion.** Every credential the project issues follows it:

- a session (Django): bound to the password hash (``update_session_auth_hash``); the
  session of a deactivated or deleted user is anonymous;
- a JWT (simplejwt, the ``jwt`` extra): bound to the password by
  ``SIMPLE_JWT["CHECK_REVOKE_TOKEN"]`` (refused on use, and on refresh by the
  project's refresh serializer); a deactivated or deleted user's is refused on use;
- an OAuth access token, refresh token or authorization code (django-oauth-toolkit, the
  ``oauth`` extra): these are rows, not signed values, so they are **revoked** when it
  happens — :func:`connect` wires the receivers below when ``oauth2_provider`` is
  installed. A password change (``set_password()`` then ``save()``, the admin's form,
  ``changepassword``) or ``is_active = False`` then ``save()`` revokes the user's
  refresh tokens and deletes their access tokens, ID tokens and unused codes; deleting
  the user deletes them all (django-oauth-toolkit's foreign keys cascade). On top of
  that, :class:`affordances.mcp.oauth.OAuth2Validator` refuses a deactivated user's
  refresh token or code, and ``OAuth2Authentication`` a deactivated user's access token
  — for a deactivation the receivers did not see.

What no receiver sees: a ``QuerySet.update()`` of ``password`` or ``is_active``, raw
SQL, a fixture loaded with ``loaddata --raw``. After such a write call
:func:`revoke_oauth_credentials` for the users concerned (docs/howto/deploy.md).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import IntegrityError, router, transaction
from django.db.models.signals import post_save, pre_save
from django.utils import timezone

__all__ = ["connect", "revoke_oauth_credentials"]

# The fields whose change ends the user's sessions.
_FIELDS = ("password", "is_active")
# Set on the instance by pre_save, read by post_save: whether this save ends them.
_ENDS = "_affordances_ends_sessions"


def revoke_oauth_credentials(user: Any) -> None:
    """Revoke every django-oauth-toolkit credential of ``user`` (a user or its pk):
    its refresh tokens are marked revoked (a replay then revokes its family), its access
    tokens, ID tokens and authorization codes are deleted. Nothing without
    ``oauth2_provider`` installed."""
    if not apps.is_installed("oauth2_provider"):
        return
    from oauth2_provider.models import (
        get_access_token_model,
        get_grant_model,
        get_id_token_model,
        get_refresh_token_model,
    )

    pk = getattr(user, "pk", user)
    refresh_model = get_refresh_token_model()
    access_model = get_access_token_model()
    using = router.db_for_write(access_model)
    with transaction.atomic(using=using):
        live = refresh_model.objects.filter(user_id=pk, revoked__isnull=True)
        try:
            with transaction.atomic(using=using):
                now = timezone.now()
                live.update(revoked=now, updated=now, access_token=None)
        except IntegrityError:
            # Two live rows with one checksum cannot share a revocation time (the
            # uniqueness is (token_checksum, revoked)): one by one, as the toolkit does.
            for token in live:
                token.revoke()
        access_model.objects.filter(user_id=pk).delete()
        get_id_token_model().objects.filter(user_id=pk).delete()
        get_grant_model().objects.filter(user_id=pk).delete()


def _before_save(sender: Any, instance: Any, raw: bool = False, **kwargs: Any) -> None:
    setattr(instance, _ENDS, False)
    if instance.pk is None or (
        kwargs.get("update_fields") is not None
        and not (set(kwargs["update_fields"]) & set(_FIELDS))
    ):
        return  # a new user, or a save of other fields (the login's last_login)
    stored = (
        sender._default_manager.using(kwargs.get("using"))
        .filter(pk=instance.pk)
        .values(*[f for f in _FIELDS if _has_field(sender, f)])
        .first()
    )
    if stored is None:
        return
    password_changed = "password" in stored and stored["password"] != instance.password
    deactivated = stored.get("is_active", True) and not getattr(instance, "is_active", True)
    setattr(instance, _ENDS, bool(password_changed or deactivated))


def _after_save(sender: Any, instance: Any, created: bool = False, **kwargs: Any) -> None:
    if getattr(instance, _ENDS, False):
        setattr(instance, _ENDS, False)
        revoke_oauth_credentials(instance)


def _has_field(model: Any, name: str) -> bool:
    try:
        model._meta.get_field(name)
    except Exception:  # FieldDoesNotExist: a custom user model without it
        return False
    return True


def connect() -> None:
    """Revoke a user's OAuth credentials when the password changes or the user is
    deactivated (from ``AppConfig.ready``; only with ``oauth2_provider`` installed)."""
    if not apps.is_installed("oauth2_provider"):
        return
    user_model = get_user_model()
    pre_save.connect(_before_save, sender=user_model, dispatch_uid="affordances.credentials")
    post_save.connect(_after_save, sender=user_model, dispatch_uid="affordances.credentials")
