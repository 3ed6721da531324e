from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from affordances import capabilities


class Command(BaseCommand):
    help = (
        "Forget the permissions CachedModelBackend keeps in AFFORDANCES['CAPABILITIES_CACHE'], "
        "of every user or of the users given, in every process (the versions are bumped in "
        "the shared cache): after a change that sent no signal (QuerySet.update(), "
        "bulk_create(), a through table's rows, raw SQL, fixtures), the next request loads "
        "them anew. Exits non-zero when the cache is not shared or fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            action="append",
            default=[],
            metavar="PK",
            help="The primary key of a user (repeatable); default: every user.",
        )

    def handle(self, *args: Any, user: list[str], **options: Any) -> None:
        setup = capabilities.setup()
        if setup.asked and not setup.shared:
            # Said rather than pretended: a cache kept per process could only ever be
            # cleared in this one (affordances.W013).
            raise CommandError(
                f"Cannot forget in every process: AFFORDANCES['CAPABILITIES_CACHE'] is "
                f"{setup.alias!r}, a cache each process keeps for itself "
                "(affordances.W013), so CachedModelBackend keeps nothing in it. Name a "
                "shared cache (Redis, Memcached, the database)."
            )
        if not setup.on:
            self.stdout.write(
                "The capabilities cache is off (no CachedModelBackend in "
                "AUTHENTICATION_BACKENDS, or CAPABILITIES_CACHE is None): nothing is kept, "
                "every request loads its permissions."
            )
            return
        try:
            if not user:
                capabilities.forget()
            for pk in user:
                capabilities.forget(pk)
        except Exception as exc:  # the cache is down: say so, exit non-zero
            raise CommandError(f"The capabilities cache failed: {exc}") from exc
        whom = "every user" if not user else f"{len(user)} user(s)"
        self.stdout.write(
            f"Forgot the kept permissions of {whom} in the shared cache {setup.alias!r}: "
            "every process loads them anew."
        )
