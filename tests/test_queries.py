"""A list of N orders with affordances costs a constant number of queries (SPEC §5)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from orders.services import order_create


def _list_queries(username: str, page_size: int, extra: str = "") -> tuple[int, list[dict]]:
    # A fresh client and a fresh user object: no permission cache carried over.
    client = APIClient()
    client.force_authenticate(get_user_model().objects.get(username=username))
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/api/orders/?page_size={page_size}{extra}")
    assert response.status_code == 200
    return len(captured.captured_queries), response.json()["results"]


@pytest.fixture
def many_orders(demo):
    alice = demo.users["alice"]
    bob = demo.users["bob"]
    # Alternate totals around the high-value threshold and payment states so the list
    # exercises conditions, guards and constraints, not only one code path.
    for index in range(40):
        order_create(
            customer=alice,
            total=Decimal("1500.00") if index % 3 == 0 else Decimal("20.00") + index,
            payment_status=("authorized", "pending", "failed")[index % 3],
        )
    for index in range(5):
        order_create(customer=bob, total=Decimal("30.00") + index)
    return demo


@pytest.mark.parametrize("username", ["support", "alice", "supervisor", "admin"])
def test_order_list_with_affordances_costs_the_same_queries_at_10_and_40_items(
    many_orders, username
):
    small, small_results = _list_queries(username, 10)
    large, large_results = _list_queries(username, 40)

    assert len(small_results) == 10
    assert len(large_results) == 40
    # The affordances really are computed for every item.
    assert all("affordances" in item for item in large_results)
    assert any(item["affordances"] or item["unavailableAffordances"] for item in large_results)
    assert small == large, (small, large)


def test_plain_order_list_costs_the_same_queries_at_10_and_40_items(many_orders):
    small, small_results = _list_queries("support", 10, "&affordances=none")
    large, large_results = _list_queries("support", 40, "&affordances=none")

    assert len(small_results) == 10
    assert len(large_results) == 40
    assert all("affordances" not in item for item in large_results)
    assert small == large, (small, large)
