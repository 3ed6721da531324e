"""Idempotency keys (SPEC §6): claim by unique insert, replay a stored success.

The claim is committed on its own before the operation runs, so a concurrent duplicate
sees it at once (``idempotency_key_in_use``) instead of racing a read-then-write.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.utils.encoders import JSONEncoder

from affordances import retention
from affordances.conf import settings
from affordances.encoding import canonical_json
from affordances.models import IdempotencyRecord
from affordances.problems import Problem, ProblemCode

__all__ = [
    "Claim",
    "claim",
    "complete",
    "fingerprint",
    "purge_expired",
    "release",
    "stored_body",
]

MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Claim:
    record: IdempotencyRecord
    replay: bool


def fingerprint(*, operation: str, pk: Any, arguments: dict[str, Any]) -> str:
    payload = canonical_json({"operation": operation, "object": str(pk), "arguments": arguments})
    return hashlib.sha256(payload.encode()).hexdigest()


def claim(*, user: Any, key: str, print_: str) -> Claim:
    if not key or len(key) > MAX_KEY_LENGTH:
        raise Problem.malformed(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.")
    now = timezone.now()
    # An expired key is forgotten: the caller may use it again.
    IdempotencyRecord.objects.filter(user=user, key=key, expires_at__lte=now).delete()
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                user=user,
                key=key,
                fingerprint=print_,
                expires_at=now + timedelta(seconds=settings.IDEMPOTENCY_TTL),
            )
        return Claim(record=record, replay=False)
    except IntegrityError:
        pass
    existing = IdempotencyRecord.objects.filter(user=user, key=key).first()
    if existing is not None and existing.fingerprint != print_:
        raise Problem(
            status=422,
            code=ProblemCode.IDEMPOTENCY_KEY_REUSED,
            detail="This Idempotency-Key was already used for a different request.",
        )
    if existing is None or existing.state != IdempotencyRecord.DONE:
        raise Problem(
            status=409,
            code=ProblemCode.IDEMPOTENCY_KEY_IN_USE,
            detail="A request with this Idempotency-Key is still running; retry shortly.",
        )
    return Claim(record=existing, replay=True)


def complete(record: IdempotencyRecord, *, status_code: int, body: dict[str, Any]) -> None:
    """Store the success; runs inside the operation's transaction."""
    record.state = IdempotencyRecord.DONE
    record.status_code = status_code
    record.body = json.dumps(body, cls=JSONEncoder)
    record.save(update_fields=["state", "status_code", "body"])


def release(record: IdempotencyRecord) -> None:
    """A refusal is not stored: nothing ran, so the key may be used again."""
    IdempotencyRecord.objects.filter(pk=record.pk, state=IdempotencyRecord.RUNNING).delete()


def purge_expired(*, now: Any = None, batch_size: int | None = None) -> int:
    """Delete expired records in bounded batches (see ``affordances.retention``)."""
    return retention.delete_in_batches(
        retention.expired_idempotency_records(now=now),
        batch_size=batch_size or retention.DEFAULT_BATCH_SIZE,
    )


def stored_body(record: IdempotencyRecord) -> dict[str, Any]:
    """The success body as first served (key order included)."""
    return json.loads(record.body) if record.body else {}
