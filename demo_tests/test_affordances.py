"""Affordances on the order representation (docs/protocol.md#affordances), checked against
an oracle of docs/demo.md#orders.

The oracle (demo_tests/oracle.py) is written from the documentation's text alone —
capabilities per group, the state → reason tables, the conditions, the guard and the
precedence rule — and never asks the application which operations apply. Every demo
order and every demo role is compared with it: the demo is what its documentation says.
What affordances guarantee on any model is tested on the library's shop, in
tests/test_affordances.py.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from demo_tests.oracle import (
    CANCEL_REASONS,
    DEMO,
    ROLES,
    allowed_cancel_reasons,
    can_see,
    oracle,
)

URN = "urn:example:operation:{}:v1"

CATALOG_CANCEL_REASONS = set(CANCEL_REASONS)


def effective_enum(constraints: dict, name: str, catalog_enum: set[str]) -> set[str]:
    narrowed = constraints.get("properties", {}).get(name, {})
    return set(narrowed["enum"]) if "enum" in narrowed else set(catalog_enum)


def detail(client, order_id, query: str = ""):
    return client.get(f"/api/orders/{order_id}/{query}")


def test_demo_data_matches_the_spec_table(demo, api):
    client = api("admin")
    for key, row in DEMO.items():
        body = detail(client, demo.orders[key].pk).json()
        assert body["customer"] == row.customer, key
        assert body["status"] == row.status, key
        assert Decimal(body["total"]) == row.total, key
        assert body["paymentStatus"] == row.payment, key
        assert body["trackingNumber"] == row.tracking, key
        assert body["currency"] == "EUR", key
        assert body["version"] == 1, key
        assert (body["deliveredAt"] is None) == (row.delivered_days_ago is None), key


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("key", list(DEMO))
def test_affordances_of_every_order_for_every_role_follow_the_spec(demo, api, key, role):
    row = DEMO[key]
    order = demo.orders[key]
    response = detail(api(role), order.pk)

    if not can_see(role, key):
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
        assert "affordances" not in response.json()
        return

    assert response.status_code == 200
    body = response.json()
    expected_available, expected_unavailable = oracle(role, key)
    assert sorted(a["name"] for a in body["affordances"]) == sorted(expected_available)
    assert sorted((u["name"], u["reason"]) for u in body["unavailableAffordances"]) == sorted(
        expected_unavailable.items()
    )

    for affordance in body["affordances"]:
        name = affordance["name"]
        constraints = affordance["constraints"]
        assert affordance["validForVersion"] == body["version"]
        assert set(constraints) <= {"properties", "required"}
        if name == "cancel_order":
            assert effective_enum(constraints, "reason", CATALOG_CANCEL_REASONS) == (
                set(allowed_cancel_reasons(role, key))
            )
        elif name == "refund_order":
            maximum = constraints["properties"]["amount"]["maximum"]
            assert Decimal(str(maximum)) == row.total
        else:
            assert constraints == {}
    for entry in body["unavailableAffordances"]:
        assert set(entry) == {"operation", "name", "reason"}
        assert entry["operation"] == URN.format(entry["name"].replace("_", "-"))
