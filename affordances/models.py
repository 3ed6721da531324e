from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

if apps.apps_ready and not apps.is_installed("affordances"):
    # Imported by the faces (a URLconf including the router, the admin, the MCP view)
    # without the app: say so, rather than Django's RuntimeError about an app_label. No
    # system check can: the app's checks are registered by its AppConfig.
    raise ImproperlyConfigured(
        "'affordances' is not in INSTALLED_APPS, but its models are imported (by the "
        'REST router, the admin or the MCP view). Add "affordances" to INSTALLED_APPS, '
        'after "django.contrib.contenttypes", "django.contrib.auth" and '
        '"rest_framework"; then run `manage.py migrate`.'
    )


class Interface(models.TextChoices):
    API = "api", "REST API"
    MCP = "mcp", "MCP"
    ADMIN = "admin", "Admin"


class AuditRecord(models.Model):
    """One successful transition: written in the transaction that made it."""

    operation = models.CharField(max_length=200, help_text="Operation URN.")
    operation_name = models.CharField(max_length=100)
    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT)
    object_id = models.CharField(max_length=64)
    source_state = models.CharField(max_length=64, blank=True)
    target_state = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict, encoder=DjangoJSONEncoder)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept beside the foreign key so the record still says who after a user is deleted.
    username = models.CharField(max_length=150, blank=True)
    via = models.CharField(max_length=8, choices=Interface.choices)
    version = models.PositiveIntegerField(help_text="The object's version after the operation.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["content_type", "object_id", "created_at"])]

    def __str__(self) -> str:
        return f"{self.operation_name} {self.object_id}: {self.source_state} → {self.target_state}"


class IdempotencyRecord(models.Model):
    """A caller's Idempotency-Key: claimed before running, completed with the response."""

    RUNNING = "running"
    DONE = "done"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="Hash of operation, object, arguments.")
    state = models.CharField(
        max_length=8, choices=[(RUNNING, "Running"), (DONE, "Done")], default=RUNNING
    )
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # JSON text, not jsonb: a replay must be byte-identical, and jsonb reorders keys.
    body = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # When the run that holds the claim began: set by the claim and by a takeover of an
    # abandoned one (``affordances.idempotency``); the run completes only while it is
    # still the one it set.
    claimed_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            # The claim is this insert: concurrent duplicates collide here, not in a
            # read-then-write race.
            models.UniqueConstraint(fields=["user", "key"], name="affordances_idempotency_unique")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"


class OAuthIdentity(models.Model):
    """A local user that the tokens of another authorization server stand for.

    A resource server that introspects another server's tokens (RFC 7662,
    ``affordances.mcp.oauth.OAuth2Validator``) maps each token to a local user by the
    pair (issuer, subject) through this table, never by a name the other server sends:
    a foreign ``{"username": "admin"}`` is not the local admin unless an operator linked
    that identity to that account on purpose (a row here).
    """

    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "OAuth identity"
        verbose_name_plural = "OAuth identities"
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="affordances_oauth_identity_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class OAuthCodeExchange(models.Model):
    """What an authorization code was exchanged for, kept to revoke it on a replay.

    RFC 6749 §4.1.2: a code used twice means someone else holds it; the server SHOULD
    revoke the tokens issued on it. The code is kept hashed (SHA-256), the tokens by
    their refresh-token family and access-token id — plain values, so this app needs no
    migration of django-oauth-toolkit's.
    """

    code_checksum = models.CharField(max_length=64, unique=True)
    application_id = models.BigIntegerField()
    token_family = models.UUIDField(null=True, blank=True)
    access_token_id = models.BigIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"code exchange {self.pk}"


# The WSGI environ key by which an internal request names the interface it runs for:
# no HTTP client can set it (request headers arrive as HTTP_*).
VIA_ENVIRON_KEY = "affordances.via"


def interface_of(meta: Mapping[str, Any]) -> str:
    """The face a request runs for: ``api`` unless an internal request says otherwise."""
    via = meta.get(VIA_ENVIRON_KEY)
    return via if via in Interface.values else Interface.API
