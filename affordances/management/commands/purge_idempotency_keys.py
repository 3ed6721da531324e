from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from affordances import retention


class Command(BaseCommand):
    help = (
        "Delete expired Idempotency-Key records. Safe to run while serving: rows go in "
        "bounded batches, each in its own short transaction."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch-size",
            type=int,
            default=retention.DEFAULT_BATCH_SIZE,
            help=f"Rows per transaction (default {retention.DEFAULT_BATCH_SIZE}).",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Count the expired records; delete nothing."
        )

    def handle(self, *args: Any, batch_size: int, dry_run: bool, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1.")
        expired = retention.expired_idempotency_records()
        if dry_run:
            self.stdout.write(f"Would delete {expired.count()} expired idempotency record(s).")
            return
        deleted = retention.delete_in_batches(expired, batch_size=batch_size)
        self.stdout.write(f"Deleted {deleted} expired idempotency record(s).")
