"""Concurrent execution on PostgreSQL (docs/protocol.md#execution): the row lock and the idempotency
claim, on the shop of ``tests.generic.shop``.

Each thread has its own database connection, so these requests really race. SQLite
serialises writers differently; the tests skip there.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from affordances.models import AuditRecord, IdempotencyRecord
from tests.generic.shop import Purchase

# transaction=True: the threads must see committed rows. serialized_rollback: the flush
# after a transactional test also drops the groups the migrations created; restore them.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _skip_unless_postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: row locks and concurrent connections")


def _race(count: int, send: Callable[[APIClient], Any]) -> list[Any]:
    """Run ``send`` in ``count`` threads released together; each gets its own client."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    clients = []
    for _ in range(count):
        client = APIClient()
        # One user object per client: no shared permission cache between threads.
        client.force_authenticate(get_user_model().objects.get(username="support"))
        clients.append(client)

    def work(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[index] = send(clients[index])
        except BaseException as exc:  # reported below, never swallowed
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    errors = [result for result in results if isinstance(result, BaseException)]
    assert not errors, errors
    return results


def test_concurrent_confirms_with_one_version_run_exactly_once(shop):
    _skip_unless_postgres()
    purchase = shop.purchases["p-01"]
    assert (purchase.status, purchase.payment_status, purchase.version) == (
        "pending",
        "authorized",
        1,
    )

    responses = _race(
        16,
        lambda client: client.post(
            f"/api/purchases/{purchase.pk}/confirm/", {}, format="json", headers={"If-Match": '"1"'}
        ),
    )

    statuses = Counter(response.status_code for response in responses)
    assert statuses[200] == 1, statuses
    assert set(statuses) <= {200, 409, 412}, statuses
    for response in responses:
        if response.status_code != 200:
            assert response.json()["code"] in {"stale_version", "operation_not_available"}
    fresh = Purchase.objects.get(pk=purchase.pk)
    assert (fresh.status, fresh.version) == ("confirmed", 2)
    assert AuditRecord.objects.filter(object_id=str(purchase.pk)).count() == 1
    assert AuditRecord.objects.count() == 1


def test_concurrent_sends_of_one_idempotency_key_execute_once(shop):
    _skip_unless_postgres()
    purchase = shop.purchases["p-01"]

    responses = _race(
        8,
        lambda client: client.post(
            f"/api/purchases/{purchase.pk}/cancel/",
            {"reason": "customer_request"},
            format="json",
            headers={"Idempotency-Key": "race-key"},
        ),
    )

    statuses = Counter(response.status_code for response in responses)
    assert 500 not in statuses, statuses
    assert set(statuses) <= {200, 409}, statuses
    assert statuses[200] >= 1, statuses
    successes = [response.json() for response in responses if response.status_code == 200]
    assert all(body == successes[0] for body in successes)
    assert successes[0]["status"] == "cancelled"
    assert successes[0]["version"] == 2
    for response in responses:
        if response.status_code == 409:
            assert response.json()["code"] == "idempotency_key_in_use"
    fresh = Purchase.objects.get(pk=purchase.pk)
    assert (fresh.status, fresh.version) == ("cancelled", 2)
    assert AuditRecord.objects.count() == 1
    record = IdempotencyRecord.objects.get(key="race-key")
    assert record.state == IdempotencyRecord.DONE
    assert json.loads(record.body) == successes[0]
