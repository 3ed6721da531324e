from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from affordances import capabilities


class Command(BaseCommand):
    help = (
        "Forget the permissions kept in AFFORDANCES['CAPABILITIES_CACHE'], of every user "
        "or of the users given: after a change that sent no signal (QuerySet.update(), "
        "bulk_create() on a through table, raw SQL), the next request loads them anew."
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
        try:
            if not user:
                capabilities.forget()
            for pk in user:
                capabilities.forget(pk)
        except Exception as exc:  # the cache is down: say so, exit non-zero
            raise CommandError(f"The capabilities cache failed: {exc}") from exc
        whom = "every user" if not user else f"{len(user)} user(s)"
        self.stdout.write(f"Forgot the kept permissions of {whom}.")
