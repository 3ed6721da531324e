from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from affordances import retention
from affordances.conf import settings
from affordances.models import OAuthCodeExchange


class Command(BaseCommand):
    help = (
        "Delete what the OAuth authorization server's open registration leaves behind: "
        "self-registered clients that never obtained a token within "
        "AFFORDANCES['OAUTH_UNUSED_CLIENT_TTL'] seconds, expired registration tokens, and "
        "the records of exchanged codes past their tokens' lifetime. Safe to run while "
        "serving (bounded batches); run it daily, beside django-oauth-toolkit's cleartokens."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size",
            type=int,
            default=retention.DEFAULT_BATCH_SIZE,
            help=f"Rows per transaction (default {retention.DEFAULT_BATCH_SIZE}).",
        )
        parser.add_argument("--dry-run", action="store_true", help="Count; delete nothing.")

    def handle(self, *args: Any, batch_size: int, dry_run: bool, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        if not apps.is_installed("oauth2_provider"):
            raise CommandError("oauth2_provider is not installed: there is nothing to expire.")
        from oauth2_provider.models import (
            get_access_token_model,
            get_application_model,
            get_grant_model,
            get_refresh_token_model,
        )
        from oauth2_provider.settings import oauth2_settings

        now = timezone.now()
        application_model = get_application_model()
        access_model = get_access_token_model()
        registration = Q(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
        used = Q(
            Exists(get_grant_model().objects.filter(application=OuterRef("pk")))
            | Exists(get_refresh_token_model().objects.filter(application=OuterRef("pk")))
            | Exists(access_model.objects.filter(application=OuterRef("pk")).exclude(registration))
        )
        sources = application_model.RegistrationSource
        unused = application_model.objects.filter(
            registration_source__in=[sources.DCR, sources.CIMD],
            created__lt=now - timedelta(seconds=settings.OAUTH_UNUSED_CLIENT_TTL),
        ).exclude(used)
        expired_registrations = access_model.objects.filter(registration, expires__lte=now)
        exchanges = OAuthCodeExchange.objects.filter(expires_at__lte=now)
        sets = [
            ("unused self-registered client(s)", unused),
            ("expired registration token(s)", expired_registrations),
            ("exchanged-code record(s)", exchanges),
        ]
        for label, queryset in sets:
            if dry_run:
                self.stdout.write(f"Would delete {queryset.count()} {label}.")
            else:
                deleted = retention.delete_in_batches(queryset, batch_size=batch_size)
                self.stdout.write(f"Deleted {deleted} {label} (with their rows).")
