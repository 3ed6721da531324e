"""Idempotency keys (docs/protocol.md#execution): claim by unique insert, replay a stored success.

The claim is committed on its own before the operation runs, so a concurrent duplicate
sees it at once (``idempotency_key_in_use``) instead of racing a read-then-write.

A key is 1 to 255 visible ASCII characters (``%x21-7E``, HTTP's ``VCHAR``) on every
face, compared whole as sent: :func:`parse_key` refuses anything else as malformed
before the key reaches the database (REST: ``400 malformed_request``; MCP: -32602). The
draft "The Idempotency-Key HTTP Header Field" makes the header an RFC 8941 string, whose
characters are these plus the space (quoted: the quotes are then part of the key). The
space is refused as well, since HTTP trims it at the ends; so is every control character
(a NUL is an error in PostgreSQL text) and all non-ASCII: a header arrives as Latin-1,
an MCP ``_meta`` value as Unicode, and a key must be the same key on both faces.

A ``running`` claim outlives its run only when the run's worker died (gunicorn kills a
request past its ``--timeout``; the run's transaction dies with the connection). The
longest a run can take is ``REQUEST_TIMEOUT`` (the server's request timeout, default 30
seconds) plus ``LOCK_TIMEOUT`` (default 5) as a margin for clocks of several hosts:
35 seconds by default (``settings.claim_stale_after``). A claim older than that is
abandoned: a retry by the same user with the same key and the same request (fingerprint)
takes it over and runs the operation. A younger claim is still ``idempotency_key_in_use``
(409), another request with the key still ``idempotency_key_reused`` (422), and with
``REQUEST_TIMEOUT = None`` a claim is held until the key expires (``IDEMPOTENCY_TTL``).

The takeover is a compare-and-set on ``claimed_at`` (an UPDATE of the row as it was
read), so of concurrent retries exactly one takes it; the others are in use, or replay
once it completed. A run completes its claim, and a refusal releases it, only while the
claim is still its own: a run that outlived the bound after all (a server that does not
stop requests, a gthread worker) is rolled back at the end instead of completing a claim
taken over, so the operation still runs at most once per key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.utils.encoders import JSONEncoder

from affordances.conf import settings
from affordances.encoding import canonical_json
from affordances.models import IdempotencyRecord
from affordances.problems import Problem, ProblemCode

__all__ = [
    "KEY_RULE",
    "MAX_KEY_LENGTH",
    "Claim",
    "claim",
    "complete",
    "fingerprint",
    "parse_key",
    "release",
    "stored_body",
]

logger = logging.getLogger(__name__)

MAX_KEY_LENGTH = 255
KEY_RULE = f"1 to {MAX_KEY_LENGTH} visible ASCII characters (no spaces or control characters)"
_KEY = re.compile(rf"[\x21-\x7e]{{1,{MAX_KEY_LENGTH}}}")


@dataclass(frozen=True)
class Claim:
    record: IdempotencyRecord
    replay: bool


def parse_key(value: Any) -> str | None:
    """The caller's key, or None without one; :class:`Problem` (400) if malformed.

    Every face's key goes through here before anything else reads it.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not _KEY.fullmatch(value):
        raise Problem.malformed(f"Idempotency-Key must be {KEY_RULE}.")
    return value


def fingerprint(*, operation: str, pk: Any, arguments: dict[str, Any]) -> str:
    payload = canonical_json({"operation": operation, "object": str(pk), "arguments": arguments})
    return hashlib.sha256(payload.encode()).hexdigest()


def claim(*, user: Any, key: str, print_: str) -> Claim:
    if parse_key(key) is None:
        raise Problem.malformed(f"Idempotency-Key must be {KEY_RULE}.")
    now = timezone.now()
    # An expired key is forgotten: the caller may use it again.
    IdempotencyRecord.objects.filter(user=user, key=key, expires_at__lte=now).delete()
    try:
        with transaction.atomic():
            record = IdempotencyRecord.objects.create(
                user=user,
                key=key,
                fingerprint=print_,
                claimed_at=now,
                expires_at=_expiry(now),
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
    if existing is not None and existing.state == IdempotencyRecord.RUNNING:
        existing = _take_over(existing, now=now)
        if existing is not None and existing.state == IdempotencyRecord.RUNNING:
            return Claim(record=existing, replay=False)
    if existing is None:
        raise Problem(
            status=409,
            code=ProblemCode.IDEMPOTENCY_KEY_IN_USE,
            detail="A request with this Idempotency-Key is still running; retry shortly.",
        )
    return Claim(record=existing, replay=True)


def completed(*, user: Any, key: str) -> bool:
    """Whether ``user``'s request with ``key`` has run to its end (and is not expired):
    a call with this key is then a replay, answered from the record — never asked about
    again (a confirmation asks before a run, not before its replay)."""
    return IdempotencyRecord.objects.filter(
        user=user,
        key=key,
        state=IdempotencyRecord.DONE,
        expires_at__gt=timezone.now(),
    ).exists()


def _expiry(now: Any) -> Any:
    return now + timedelta(seconds=settings.IDEMPOTENCY_TTL)


def _take_over(record: IdempotencyRecord, *, now: Any) -> IdempotencyRecord | None:
    """A ``running`` claim made this run's if it is abandoned; else what it is now.

    Returns ``record`` claimed anew (``running``, now ours); the row completed meanwhile
    (``done``: to replay); or None: the claim is young, another retry took it first, or
    it was released — in use.
    """
    stale_after = settings.claim_stale_after
    if stale_after is None or record.claimed_at >= now - timedelta(seconds=stale_after):
        return None
    expires_at = _expiry(now)
    # Compare-and-set: the row changes only if nobody claimed it since we read it.
    if _own(record).update(claimed_at=now, expires_at=expires_at):
        logger.warning(
            "Idempotency claim %s of user %s, running since %s, abandoned: taken over",
            record.pk,
            record.user_id,
            record.claimed_at.isoformat(),
        )
        record.claimed_at = now
        record.expires_at = expires_at
        return record
    return IdempotencyRecord.objects.filter(pk=record.pk, state=IdempotencyRecord.DONE).first()


def _own(record: IdempotencyRecord) -> Any:
    """The claim's row while it is still this run's (not taken over since)."""
    return IdempotencyRecord.objects.filter(
        pk=record.pk, state=IdempotencyRecord.RUNNING, claimed_at=record.claimed_at
    )


def complete(record: IdempotencyRecord, *, status_code: int, body: dict[str, Any]) -> None:
    """Store the success; runs inside the operation's transaction.

    Only while the claim is still this run's: one taken over since (this run outlived
    the bound) is left to the retry that took it, and the problem raised here rolls this
    run back.
    """
    stored = json.dumps(body, cls=JSONEncoder)
    done = IdempotencyRecord.DONE
    if not _own(record).update(state=done, status_code=status_code, body=stored):
        raise Problem(
            status=409,
            code=ProblemCode.IDEMPOTENCY_KEY_IN_USE,
            detail="A retry with this Idempotency-Key took the request over; nothing ran here.",
        )
    record.state, record.status_code, record.body = done, status_code, stored


def release(record: IdempotencyRecord) -> None:
    """A refusal is not stored: nothing ran, so the key may be used again."""
    _own(record).delete()


def stored_body(record: IdempotencyRecord) -> dict[str, Any]:
    """The success body as first served (key order included)."""
    return json.loads(record.body) if record.body else {}
