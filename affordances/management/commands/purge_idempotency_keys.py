from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from affordances.idempotency import purge_expired


class Command(BaseCommand):
    help = "Delete expired Idempotency-Key records. Safe to run while serving."

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = purge_expired()
        self.stdout.write(f"Deleted {deleted} expired idempotency record(s).")
