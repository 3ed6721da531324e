"""Retention: delete old rows in bounded batches, safe to run while serving.

Each batch selects at most ``batch_size`` primary keys, then deletes those rows — still
matching the filter — in a transaction of its own. Locks are held for one short batch
at a time, never for the whole purge, and a request that writes a row meanwhile is
never blocked for longer than one batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from affordances.models import AuditRecord, IdempotencyRecord

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "delete_in_batches",
    "expired_idempotency_records",
    "old_audit_records",
]

DEFAULT_BATCH_SIZE = 1000


def delete_in_batches(
    queryset: models.QuerySet[Any],
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    pause: float = 0.0,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Delete the rows of ``queryset``, ``batch_size`` at a time; return how many went.

    Not to be called inside a transaction: each batch must commit on its own.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    deleted_total = 0
    last_pk: Any = None
    while True:
        # Keyset pagination: each batch starts after the last one, so rows that could
        # not go (changed meanwhile, so no longer matching) are not selected forever.
        candidates = queryset.order_by("pk")
        if last_pk is not None:
            candidates = candidates.filter(pk__gt=last_pk)
        pks = list(candidates.values_list("pk", flat=True)[:batch_size])
        if not pks:
            return deleted_total
        last_pk = pks[-1]
        with transaction.atomic(using=queryset.db):
            # Deleted by key and re-filtered: a row changed since it was selected stays.
            deleted, _ = queryset.filter(pk__in=pks).delete()
        deleted_total += deleted
        if on_batch is not None:
            on_batch(deleted)
        if len(pks) < batch_size:
            return deleted_total
        if pause:
            time.sleep(pause)


def expired_idempotency_records(*, now: datetime | None = None) -> models.QuerySet[Any]:
    """Idempotency keys past their expiry: forgotten already, only their rows remain."""
    return IdempotencyRecord.objects.filter(expires_at__lte=now or timezone.now())


def old_audit_records(*, days: int, now: datetime | None = None) -> models.QuerySet[Any]:
    """Audit records written more than ``days`` days ago."""
    if days < 1:
        raise ValueError("days must be at least 1")
    return AuditRecord.objects.filter(created_at__lt=(now or timezone.now()) - timedelta(days=days))
