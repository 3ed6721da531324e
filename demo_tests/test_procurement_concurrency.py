"""Two approvals racing for a cost center's last budget on PostgreSQL: exactly one wins.

The approvals are of *different* requests, so the request's row lock does not order
them; only the reservation under the cost center's row lock (``procurement.budget``)
does. Each thread has its own connection; SQLite serialises writers differently, so
these tests skip there.
"""

from __future__ import annotations

import threading
from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from demo_tests.conftest import ProcurementDemo
from procurement.models import CostCenter, PurchaseRequest

# transaction=True: the threads must see committed rows. serialized_rollback: the flush
# after a transactional test also drops the groups the migrations created; restore them.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _race(sends: list[tuple[str, int]]) -> list[Any]:
    """POST approve for each (approver, request id) in its own thread, released together."""
    barrier = threading.Barrier(len(sends))
    results: list[Any] = [None] * len(sends)
    clients = []
    for username, _ in sends:
        client = APIClient()
        client.force_authenticate(get_user_model().objects.get(username=username))
        clients.append(client)

    def work(index: int) -> None:
        try:
            barrier.wait(timeout=30)
            pk = sends[index][1]
            results[index] = clients[index].post(
                f"/api/purchase-requests/{pk}/approve/", {}, format="json"
            )
        except BaseException as exc:  # reported below, never swallowed
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sends))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    errors = [result for result in results if isinstance(result, BaseException)]
    assert not errors, errors
    return results


@pytest.fixture
def postgres() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: row locks and concurrent connections")


def test_two_approvals_for_the_last_budget_exactly_one_wins(
    postgres: None, procurement: ProcurementDemo
) -> None:
    # MKT has 1000 left; pr-08 and pr-09 ask for 600 each: both fit alone, not together.
    first, second = procurement.request("pr-08"), procurement.request("pr-09")
    assert CostCenter.objects.get(code="MKT").remaining == Decimal("1000.00")

    responses = _race([("senior_approver", first.pk), ("approver", second.pk)])

    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: 1}, [r.content for r in responses]
    (loser,) = [r for r in responses if r.status_code == 409]
    assert (loser.json()["code"], loser.json()["reason"]) == (
        "operation_not_available",
        "budget_exhausted",
    )
    assert CostCenter.objects.get(code="MKT").committed == Decimal("9600.00")
    approved = PurchaseRequest.objects.filter(pk__in=[first.pk, second.pk], status="approved")
    assert approved.count() == 1


def test_many_approvals_never_overdraw_the_budget(
    postgres: None, procurement: ProcurementDemo
) -> None:
    # Eight fresh 300-requests on MKT (1000 left): at most three fit.
    template = procurement.request("pr-08")
    pks = []
    for index in range(8):
        request = PurchaseRequest.objects.create(
            requester=template.requester,
            title=f"Race {index}",
            cost_center=template.cost_center,
            supplier=template.supplier,
            quantity=1,
            unit_price=Decimal("300.00"),
            needed_by=template.needed_by,
            status="submitted",
        )
        pks.append(request.pk)

    responses = _race([("senior_approver", pk) for pk in pks])

    assert Counter(r.status_code for r in responses) == {200: 3, 409: 5}
    center = CostCenter.objects.get(code="MKT")
    assert center.committed == Decimal("9900.00")
    assert center.remaining >= 0
