"""Affordances on the order representation (docs/protocol.md#affordances), checked against
an oracle of docs/demo.md#orders.

The oracle (demo_tests/oracle.py) is written from the documentation's text alone —
capabilities per group, the state → reason tables, the conditions, the guard and the
precedence rule — and never asks the application which operations apply. Every demo
order and every demo role is compared with it.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.execution import perform
from affordances.problems import Problem
from demo_tests.oracle import (
    CANCEL_REASONS,
    DEMO,
    ROLES,
    allowed_cancel_reasons,
    can_see,
    oracle,
)
from orders.models import Order

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


def test_affordance_has_the_shape_of_spec_section_5(demo, api):
    order = demo.orders["demo-01"]
    Order.objects.filter(pk=order.pk).update(version=3)

    response = detail(api("alice"), order.pk)

    body = response.json()
    assert body["version"] == 3
    assert body["affordances"] == [
        {
            "operation": "urn:example:operation:cancel-order:v1",
            "name": "cancel_order",
            "title": "Cancel order",
            "method": "POST",
            "confirmationRequired": True,
            "target": f"http://testserver/api/orders/{order.pk}/cancel/",
            "arguments": {"orderId": order.pk},
            "constraints": {"properties": {"reason": {"enum": ["customer_request"]}}},
            "validForVersion": 3,
        }
    ]
    assert body["unavailableAffordances"] == []


def test_unavailable_affordance_carries_operation_urn_name_and_reason_only(demo, api):
    body = detail(api("warehouse"), demo.orders["demo-01"].pk).json()

    assert body["unavailableAffordances"] == [
        {
            "operation": "urn:example:operation:ship-order:v1",
            "name": "ship_order",
            "reason": "not_confirmed",
        },
        {
            "operation": "urn:example:operation:deliver-order:v1",
            "name": "deliver_order",
            "reason": "not_shipped",
        },
    ]


def test_operation_without_capability_appears_nowhere_in_the_representation(demo, api):
    response = detail(api("alice"), demo.orders["demo-05"].pk)

    assert response.status_code == 200
    for operation in ("confirm", "ship", "deliver", "refund"):
        for needle in (f"{operation}_order", f"{operation}-order", f"/{operation}/"):
            assert needle.encode() not in response.content


def test_customer_cancel_is_narrowed_to_customer_request(demo, api):
    body = detail(api("alice"), demo.orders["demo-01"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_order"]

    assert cancel["constraints"] == {"properties": {"reason": {"enum": ["customer_request"]}}}


def test_support_may_give_payment_failure_on_a_failed_payment(demo, api):
    body = detail(api("support"), demo.orders["demo-04"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_order"]

    allowed = effective_enum(cancel["constraints"], "reason", CATALOG_CANCEL_REASONS)
    assert "payment_failure" in allowed
    assert allowed == CATALOG_CANCEL_REASONS


def test_support_may_not_give_payment_failure_on_an_authorized_payment(demo, api):
    body = detail(api("support"), demo.orders["demo-01"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_order"]

    assert sorted(cancel["constraints"]["properties"]["reason"]["enum"]) == [
        "customer_request",
        "inventory_failure",
    ]


def test_refund_amount_is_bounded_by_the_total_as_a_json_number(demo, api):
    body = detail(api("supervisor"), demo.orders["demo-07"].pk).json()
    (refund,) = [a for a in body["affordances"] if a["name"] == "refund_order"]

    maximum = refund["constraints"]["properties"]["amount"]["maximum"]
    assert isinstance(maximum, int | float)
    assert not isinstance(maximum, bool)
    assert maximum == 300


def test_affordances_none_omits_both_lists(demo, api):
    client = api("support")
    order = demo.orders["demo-01"]

    plain = detail(client, order.pk, "?affordances=none").json()
    listed = client.get("/api/orders/?affordances=none").json()["results"]

    assert "affordances" not in plain
    assert "unavailableAffordances" not in plain
    assert plain["id"] == order.pk
    assert plain["version"] == 1
    assert listed
    assert all("affordances" not in item for item in listed)
    assert all("unavailableAffordances" not in item for item in listed)


def test_list_items_carry_the_same_affordances_as_the_detail(demo, api):
    client = api("support")

    listed = {item["id"]: item for item in client.get("/api/orders/").json()["results"]}

    for order in demo.orders.values():
        one = detail(client, order.pk).json()
        assert listed[order.pk]["affordances"] == one["affordances"]
        assert listed[order.pk]["unavailableAffordances"] == one["unavailableAffordances"]


def test_detail_carries_etag_of_the_version_and_private_no_cache_headers(demo, api):
    order = demo.orders["demo-05"]
    Order.objects.filter(pk=order.pk).update(version=7)

    response = detail(api("support"), order.pk)

    assert response["ETag"] == '"7"'
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"private", "no-cache"} <= cache_control
    vary = {part.strip().lower() for part in response["Vary"].split(",")}
    assert {"authorization", "cookie"} <= vary


def test_hidden_order_is_404_exactly_like_a_missing_one(demo, api):
    client = api("alice")
    hidden = detail(client, demo.orders["demo-10"].pk)
    missing = detail(client, 987654321)

    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
    assert hidden["Content-Type"] == missing["Content-Type"]


def _widened_cancel():
    operation = get_catalog().lookup("cancel_order")
    spec = dataclasses.replace(
        operation.spec,
        constraints=lambda order, user: {
            "properties": {"reason": {"enum": ["customer_request", "bogus"]}}
        },
    )
    return dataclasses.replace(operation, spec=spec)


def test_widening_constraint_is_refused_when_evaluated(demo):
    widened = _widened_cancel()
    order = demo.order("demo-01")
    support = demo.users["support"]
    # The unpatched operation is available here, so only the constraint can refuse.
    assert isinstance(evaluate(get_catalog().lookup("cancel_order"), order, support), Available)

    # Fail closed: the unnarrowed schema would let through what the policy refuses.
    assert evaluate(widened, order, support) == Unavailable(widened, "misconfigured")


def test_widening_constraint_refuses_execution_and_changes_nothing(demo):
    widened = _widened_cancel()
    order = demo.orders["demo-01"]

    with pytest.raises(Problem) as refused:
        perform(
            operation=widened,
            pk=order.pk,
            user=demo.users["support"],
            arguments={"reason": "bogus"},
            via="api",
            represent=lambda o: {"id": o.pk},
        )

    assert (refused.value.status, refused.value.code, refused.value.reason) == (
        409,
        "operation_not_available",
        "misconfigured",
    )
    fresh = demo.order("demo-01")
    assert fresh.status == "pending"
    assert fresh.version == 1


def test_a_page_says_what_evaluating_each_order_alone_says(demo):
    """The list shortcut (refusals per state, worked out once) answers as evaluate()."""
    from affordances.entries import AffordanceLists

    catalog = get_catalog()
    resource = catalog.resource_for(Order)
    orders = list(Order.objects.order_by("pk"))
    for username in ("alice", "support", "supervisor", "admin"):
        user = demo.users[username]
        operations = [op for op in catalog.transitions_for(Order) if op.permits(user)]
        lists = AffordanceLists(None, user, resource, operations)
        for order in orders:
            available, unavailable = lists(order)
            results = [evaluate(op, order, user) for op in operations]
            assert [a["name"] for a in available] == [
                r.operation.name for r in results if isinstance(r, Available)
            ]
            assert [(u["name"], u["reason"]) for u in unavailable] == [
                (r.operation.name, r.reason) for r in results if isinstance(r, Unavailable)
            ]


@pytest.mark.parametrize("allowed", [False, True])
def test_an_object_level_permission_comes_before_the_state_in_a_list(demo, allowed, monkeypatch):
    """django-fsm's callable permission(instance, user): refused, the operation is
    invisible even where the state would refuse it anyway; granted, the state speaks."""
    from affordances.entries import AffordanceLists

    ship = get_catalog().lookup("ship_order")
    asked: list[int] = []

    def permission(instance, user):
        asked.append(instance.pk)
        return allowed

    (fsm_transition,) = ship.facts.meta.transitions.values()
    monkeypatch.setattr(fsm_transition, "permission", permission)
    pending = demo.orders["demo-01"]
    assert pending.status == "pending"
    lists = AffordanceLists(None, demo.users["admin"], get_catalog().resource_for(Order), [ship])
    for _ in range(2):  # the second row of the same state takes the per-state plan
        available, unavailable = lists(pending)
        assert available == []
        assert unavailable == (
            []
            if not allowed
            else [
                {
                    "operation": URN.format("ship-order"),
                    "name": "ship_order",
                    "reason": "not_confirmed",
                }
            ]
        )
    assert asked == [pending.pk, pending.pk]
