"""Retention commands: only old rows go, a dry run deletes nothing, batches are bounded."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from affordances.models import AuditRecord, IdempotencyRecord
from affordances.retention import delete_in_batches, old_audit_records
from tests.generic.shop import Purchase

pytestmark = pytest.mark.django_db


def audit(object_id: str, *, days_ago: float, version: int = 2) -> AuditRecord:
    record = AuditRecord.objects.create(
        operation="urn:example:operation:confirm-purchase:v1",
        operation_name="confirm_purchase",
        content_type=ContentType.objects.get_for_model(Purchase),
        object_id=object_id,
        source_state="pending",
        target_state="confirmed",
        via="api",
        version=version,
    )
    # created_at is auto_now_add: age it afterwards.
    AuditRecord.objects.filter(pk=record.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    return record


def idempotency(key: str, *, expires_in: timedelta) -> IdempotencyRecord:
    user, _ = get_user_model().objects.get_or_create(username="retention-user")
    return IdempotencyRecord.objects.create(
        user=user, key=key, fingerprint="f" * 64, expires_at=timezone.now() + expires_in
    )


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def deletes(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().startswith("DELETE")]


# --- purge_audit_records ------------------------------------------------------------


def test_only_records_older_than_the_cutoff_go() -> None:
    old = [audit("1", days_ago=400), audit("2", days_ago=91)]
    kept = [audit("3", days_ago=89), audit("4", days_ago=1), audit("5", days_ago=0)]

    output = run("purge_audit_records", "--older-than", "90")

    assert "Deleted 2 audit record(s)" in output
    remaining = set(AuditRecord.objects.values_list("pk", flat=True))
    assert remaining == {r.pk for r in kept}
    assert not remaining & {r.pk for r in old}


def test_dry_run_counts_and_deletes_nothing() -> None:
    for days in (100, 200, 300, 5):
        audit("1", days_ago=days)

    with CaptureQueriesContext(connection) as queries:
        output = run("purge_audit_records", "--older-than", "30", "--dry-run")

    assert "Would delete 3 audit record(s)" in output
    assert AuditRecord.objects.count() == 4
    assert deletes(queries) == []


def test_small_batches_delete_everything_old_one_batch_per_statement() -> None:
    for index in range(5):
        audit(str(index), days_ago=60 + index)
    fresh = audit("fresh", days_ago=1)

    with CaptureQueriesContext(connection) as queries:
        output = run("purge_audit_records", "--older-than", "30", "--batch-size", "2")

    assert "Deleted 5 audit record(s)" in output
    assert list(AuditRecord.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert len(deletes(queries)) == 3  # 2 + 2 + 1


def test_each_batch_is_its_own_transaction() -> None:
    for index in range(5):
        audit(str(index), days_ago=60 + index)
    sizes: list[int] = []

    with CaptureQueriesContext(connection) as queries:
        deleted = delete_in_batches(old_audit_records(days=30), batch_size=2, on_batch=sizes.append)

    assert deleted == 5
    assert sizes == [2, 2, 1]
    # Inside the test's transaction each batch's atomic block is a savepoint: one per batch.
    savepoints = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SAVEPOINT")]
    assert len(savepoints) == 3


def test_a_row_that_no_longer_matches_is_kept() -> None:
    records = [audit(str(index), days_ago=60) for index in range(4)]
    touched = records[2]
    seen: list[int] = []

    def refresh_one(count: int) -> None:
        # Between batches, a record becomes young again (stands for a concurrent change).
        seen.append(count)
        AuditRecord.objects.filter(pk=touched.pk).update(created_at=timezone.now())

    deleted = delete_in_batches(old_audit_records(days=30), batch_size=2, on_batch=refresh_one)

    assert deleted == 3
    assert list(AuditRecord.objects.values_list("pk", flat=True)) == [touched.pk]


def test_nothing_old_deletes_nothing() -> None:
    audit("1", days_ago=2)

    output = run("purge_audit_records", "--older-than", "30")

    assert "Deleted 0 audit record(s)" in output
    assert AuditRecord.objects.count() == 1


@pytest.mark.parametrize(
    "args",
    [
        ("--older-than", "0"),
        ("--older-than", "-5"),
        ("--older-than", "30", "--batch-size", "0"),
    ],
)
def test_bad_arguments_are_refused(args: tuple[str, ...]) -> None:
    audit("1", days_ago=400)

    with pytest.raises(CommandError):
        run("purge_audit_records", *args)

    assert AuditRecord.objects.count() == 1


def test_older_than_is_required() -> None:
    with pytest.raises(CommandError, match="older-than"):
        run("purge_audit_records")


# --- purge_idempotency_keys -----------------------------------------------------------


def test_idempotency_purge_deletes_only_expired_keys_in_batches() -> None:
    expired = [idempotency(f"old-{i}", expires_in=-timedelta(minutes=i + 1)) for i in range(5)]
    fresh = idempotency("fresh", expires_in=timedelta(hours=1))

    with CaptureQueriesContext(connection) as queries:
        output = run("purge_idempotency_keys", "--batch-size", "2")

    assert "Deleted 5 expired idempotency record(s)" in output
    assert list(IdempotencyRecord.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert len(deletes(queries)) == 3
    assert all(not IdempotencyRecord.objects.filter(pk=r.pk).exists() for r in expired)


def test_idempotency_dry_run_deletes_nothing() -> None:
    idempotency("old", expires_in=-timedelta(seconds=1))
    idempotency("fresh", expires_in=timedelta(hours=1))

    output = run("purge_idempotency_keys", "--dry-run")

    assert "Would delete 1 expired idempotency record(s)" in output
    assert IdempotencyRecord.objects.count() == 2


def test_idempotency_purge_refuses_a_zero_batch() -> None:
    with pytest.raises(CommandError):
        run("purge_idempotency_keys", "--batch-size", "0")
