"""Affordances on the purchase representation (docs/protocol.md#affordances), checked
against the shop's oracle.

The oracle (tests/shop_oracle.py) is written from what the shop declares — capabilities
per role, the state → reason tables, the conditions, the guard and the precedence rule —
and never asks the library which operations apply. Every purchase of the shop and every
role is compared with it.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.execution import perform
from affordances.problems import Problem
from tests.generic.shop import Purchase
from tests.shop_oracle import (
    CANCEL_REASONS,
    PURCHASES,
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
    return client.get(f"/api/purchases/{order_id}/{query}")


def test_shop_data_matches_the_oracle_table(shop, shop_api):
    client = shop_api("admin")
    for key, row in PURCHASES.items():
        body = detail(client, shop.purchases[key].pk).json()
        assert body["customer"] == row.customer, key
        assert body["status"] == row.status, key
        assert Decimal(body["total"]) == row.total, key
        assert body["paymentStatus"] == row.payment, key
        assert body["trackingNumber"] == row.tracking, key
        assert body["version"] == 1, key
        assert (body["deliveredAt"] is None) == (row.delivered_days_ago is None), key


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("key", list(PURCHASES))
def test_affordances_of_every_purchase_for_every_role_follow_the_oracle(shop, shop_api, key, role):
    row = PURCHASES[key]
    purchase = shop.purchases[key]
    response = detail(shop_api(role), purchase.pk)

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
        if name == "cancel_purchase":
            assert effective_enum(constraints, "reason", CATALOG_CANCEL_REASONS) == (
                set(allowed_cancel_reasons(role, key))
            )
        elif name == "refund_purchase":
            maximum = constraints["properties"]["amount"]["maximum"]
            assert Decimal(str(maximum)) == row.total
        else:
            assert constraints == {}
    for entry in body["unavailableAffordances"]:
        assert set(entry) == {"operation", "name", "reason"}
        assert entry["operation"] == URN.format(entry["name"].replace("_", "-"))


def test_affordance_has_the_shape_of_spec_section_5(shop, shop_api):
    purchase = shop.purchases["p-01"]
    Purchase.objects.filter(pk=purchase.pk).update(version=3)

    response = detail(shop_api("alice"), purchase.pk)

    body = response.json()
    assert body["version"] == 3
    assert body["affordances"] == [
        {
            "operation": "urn:example:operation:cancel-purchase:v1",
            "name": "cancel_purchase",
            "title": "Cancel purchase",
            "method": "POST",
            "confirmationRequired": True,
            "target": f"http://testserver/api/purchases/{purchase.pk}/cancel/",
            "arguments": {"purchaseId": purchase.pk},
            "constraints": {"properties": {"reason": {"enum": ["customer_request"]}}},
            "validForVersion": 3,
        }
    ]
    assert body["unavailableAffordances"] == []


def test_unavailable_affordance_carries_operation_urn_name_and_reason_only(shop, shop_api):
    body = detail(shop_api("warehouse"), shop.purchases["p-01"].pk).json()

    assert body["unavailableAffordances"] == [
        {
            "operation": "urn:example:operation:ship-purchase:v1",
            "name": "ship_purchase",
            "reason": "not_confirmed",
        },
        {
            "operation": "urn:example:operation:deliver-purchase:v1",
            "name": "deliver_purchase",
            "reason": "not_shipped",
        },
    ]


def test_operation_without_capability_appears_nowhere_in_the_representation(shop, shop_api):
    response = detail(shop_api("alice"), shop.purchases["p-05"].pk)

    assert response.status_code == 200
    for operation in ("confirm", "ship", "deliver", "refund"):
        for needle in (f"{operation}_purchase", f"{operation}-purchase", f"/{operation}/"):
            assert needle.encode() not in response.content


def test_customer_cancel_is_narrowed_to_customer_request(shop, shop_api):
    body = detail(shop_api("alice"), shop.purchases["p-01"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_purchase"]

    assert cancel["constraints"] == {"properties": {"reason": {"enum": ["customer_request"]}}}


def test_support_may_give_payment_failure_on_a_failed_payment(shop, shop_api):
    body = detail(shop_api("support"), shop.purchases["p-04"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_purchase"]

    allowed = effective_enum(cancel["constraints"], "reason", CATALOG_CANCEL_REASONS)
    assert "payment_failure" in allowed
    assert allowed == CATALOG_CANCEL_REASONS


def test_support_may_not_give_payment_failure_on_an_authorized_payment(shop, shop_api):
    body = detail(shop_api("support"), shop.purchases["p-01"].pk).json()
    (cancel,) = [a for a in body["affordances"] if a["name"] == "cancel_purchase"]

    assert sorted(cancel["constraints"]["properties"]["reason"]["enum"]) == [
        "customer_request",
        "inventory_failure",
    ]


def test_refund_amount_is_bounded_by_the_total_as_a_json_number(shop, shop_api):
    body = detail(shop_api("supervisor"), shop.purchases["p-07"].pk).json()
    (refund,) = [a for a in body["affordances"] if a["name"] == "refund_purchase"]

    maximum = refund["constraints"]["properties"]["amount"]["maximum"]
    assert isinstance(maximum, int | float)
    assert not isinstance(maximum, bool)
    assert maximum == 300


def test_affordances_none_omits_both_lists(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-01"]

    plain = detail(client, purchase.pk, "?affordances=none").json()
    listed = client.get("/api/purchases/?affordances=none").json()["results"]

    assert "affordances" not in plain
    assert "unavailableAffordances" not in plain
    assert plain["id"] == purchase.pk
    assert plain["version"] == 1
    assert listed
    assert all("affordances" not in item for item in listed)
    assert all("unavailableAffordances" not in item for item in listed)


def test_list_items_carry_the_same_affordances_as_the_detail(shop, shop_api):
    client = shop_api("support")

    listed = {item["id"]: item for item in client.get("/api/purchases/").json()["results"]}

    for purchase in shop.purchases.values():
        one = detail(client, purchase.pk).json()
        assert listed[purchase.pk]["affordances"] == one["affordances"]
        assert listed[purchase.pk]["unavailableAffordances"] == one["unavailableAffordances"]


def test_detail_carries_etag_of_the_version_and_private_no_cache_headers(shop, shop_api):
    purchase = shop.purchases["p-05"]
    Purchase.objects.filter(pk=purchase.pk).update(version=7)

    response = detail(shop_api("support"), purchase.pk)

    assert response["ETag"] == '"7"'
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"private", "no-cache"} <= cache_control
    vary = {part.strip().lower() for part in response["Vary"].split(",")}
    assert {"authorization", "cookie"} <= vary


def test_hidden_purchase_is_404_exactly_like_a_missing_one(shop, shop_api):
    client = shop_api("alice")
    hidden = detail(client, shop.purchases["p-10"].pk)
    missing = detail(client, 987654321)

    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
    assert hidden["Content-Type"] == missing["Content-Type"]


def _widened_cancel():
    operation = get_catalog().lookup("cancel_purchase")
    spec = dataclasses.replace(
        operation.spec,
        constraints=lambda purchase, user: {
            "properties": {"reason": {"enum": ["customer_request", "bogus"]}}
        },
    )
    return dataclasses.replace(operation, spec=spec)


def test_widening_constraint_is_refused_when_evaluated(shop):
    widened = _widened_cancel()
    purchase = shop.purchase("p-01")
    support = shop.users["support"]
    # The unpatched operation is available here, so only the constraint can refuse.
    assert isinstance(
        evaluate(get_catalog().lookup("cancel_purchase"), purchase, support), Available
    )

    # Fail closed: the unnarrowed schema would let through what the policy refuses.
    assert evaluate(widened, purchase, support) == Unavailable(widened, "misconfigured")


def test_widening_constraint_refuses_execution_and_changes_nothing(shop):
    widened = _widened_cancel()
    purchase = shop.purchases["p-01"]

    with pytest.raises(Problem) as refused:
        perform(
            operation=widened,
            pk=purchase.pk,
            user=shop.users["support"],
            arguments={"reason": "bogus"},
            via="api",
            represent=lambda o: {"id": o.pk},
        )

    assert (refused.value.status, refused.value.code, refused.value.reason) == (
        409,
        "operation_not_available",
        "misconfigured",
    )
    fresh = shop.purchase("p-01")
    assert fresh.status == "pending"
    assert fresh.version == 1


def test_a_page_says_what_evaluating_each_purchase_alone_says(shop):
    """The list shortcut (refusals per state, worked out once) answers as evaluate()."""
    from affordances.entries import AffordanceLists

    catalog = get_catalog()
    resource = catalog.resource_for(Purchase)
    purchases = list(Purchase.objects.order_by("pk"))
    for username in ("alice", "support", "supervisor", "admin"):
        user = shop.users[username]
        operations = [op for op in catalog.transitions_for(Purchase) if op.permits(user)]
        lists = AffordanceLists(None, user, resource, operations)
        for purchase in purchases:
            available, unavailable = lists(purchase)
            results = [evaluate(op, purchase, user) for op in operations]
            assert [a["name"] for a in available] == [
                r.operation.name for r in results if isinstance(r, Available)
            ]
            assert [(u["name"], u["reason"]) for u in unavailable] == [
                (r.operation.name, r.reason) for r in results if isinstance(r, Unavailable)
            ]


@pytest.mark.parametrize("allowed", [False, True])
def test_an_object_level_permission_comes_before_the_state_in_a_list(shop, allowed, monkeypatch):
    """django-fsm's callable permission(instance, user): refused, the operation is
    invisible even where the state would refuse it anyway; granted, the state speaks."""
    from affordances.entries import AffordanceLists

    ship = get_catalog().lookup("ship_purchase")
    asked: list[int] = []

    def permission(instance, user):
        asked.append(instance.pk)
        return allowed

    (fsm_transition,) = ship.facts.meta.transitions.values()
    monkeypatch.setattr(fsm_transition, "permission", permission)
    pending = shop.purchases["p-01"]
    assert pending.status == "pending"
    lists = AffordanceLists(None, shop.users["admin"], get_catalog().resource_for(Purchase), [ship])
    for _ in range(2):  # the second row of the same state takes the per-state plan
        available, unavailable = lists(pending)
        assert available == []
        assert unavailable == (
            []
            if not allowed
            else [
                {
                    "operation": URN.format("ship-purchase"),
                    "name": "ship_purchase",
                    "reason": "not_confirmed",
                }
            ]
        )
    assert asked == [pending.pk, pending.pk]
