from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from affordances import retention


class Command(BaseCommand):
    help = (
        "Delete audit records older than --older-than DAYS (optional retention; nothing "
        "is ever deleted otherwise). Safe to run while serving: rows go in bounded "
        "batches, each in its own short transaction."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than",
            type=int,
            required=True,
            metavar="DAYS",
            help="Delete the records written more than DAYS days ago (at least 1).",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=retention.DEFAULT_BATCH_SIZE,
            help=f"Rows per transaction (default {retention.DEFAULT_BATCH_SIZE}).",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Count the records that would go; delete none."
        )

    def handle(
        self, *args: Any, older_than: int, batch_size: int, dry_run: bool, **options: Any
    ) -> None:
        if older_than < 1:
            raise CommandError("--older-than must be at least 1 day.")
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        old = retention.old_audit_records(days=older_than)
        if dry_run:
            count = old.count()
            self.stdout.write(
                f"Would delete {count} audit record(s) older than {older_than} day(s)."
            )
            return
        deleted = retention.delete_in_batches(old, batch_size=batch_size)
        self.stdout.write(f"Deleted {deleted} audit record(s) older than {older_than} day(s).")
