"""Previews (docs/protocol.md#previews): the run through the one execution path, rolled
back — the answer says what it would produce, the database stays as it was."""

from __future__ import annotations

import pytest
from django.db import connection

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import AuditRecord, IdempotencyRecord
from affordances.problems import Problem
from orders.models import Order

pytestmark = pytest.mark.django_db


def database_state() -> tuple:
    """Row counts, every order's state and version, audit and idempotency records."""
    return (
        list(Order.objects.order_by("pk").values_list("pk", "status", "version", "updated_at")),
        AuditRecord.objects.count(),
        IdempotencyRecord.objects.count(),
    )


def test_perform_preview_answers_the_would_be_run_and_keeps_nothing(demo):
    order = demo.orders["demo-01"]
    operation = get_catalog().lookup("cancel_order")
    before = database_state()
    outcome = perform(
        operation=operation,
        pk=order.pk,
        user=demo.users["support"],
        arguments={"reason": "customer_request"},
        via="api",
        represent=lambda instance: {
            "id": instance.pk,
            "status": instance.status,
            "version": instance.version,
        },
        idempotency_key="preview-key-1",
        preview=True,
    )
    assert outcome.status == 200
    assert outcome.body["preview"] is True
    assert outcome.body["stateChange"] == {"field": "status", "from": "pending", "to": "cancelled"}
    assert outcome.body["validForVersion"] == order.version
    assert outcome.body["representation"] == {
        "id": order.pk,
        "status": "cancelled",
        "version": order.version + 1,
    }
    assert database_state() == before
    assert not connection.in_atomic_block or connection.needs_rollback is False


def test_a_preview_is_refused_as_the_run_would_be(demo):
    operation = get_catalog().lookup("cancel_order")
    before = database_state()
    with pytest.raises(Problem) as refused:
        perform(
            operation=operation,
            pk=demo.orders["demo-01"].pk,
            user=demo.users["support"],
            arguments={},
            via="api",
            represent=lambda instance: {},
            preview=True,
        )
    assert refused.value.code == "validation_error"
    with pytest.raises(Problem) as refused:
        perform(
            operation=operation,
            pk=demo.orders["demo-06"].pk,  # shipped
            user=demo.users["support"],
            arguments={"reason": "customer_request"},
            via="api",
            represent=lambda instance: {},
            preview=True,
        )
    assert refused.value.code == "operation_not_available"
    assert database_state() == before


def test_the_run_after_a_preview_runs_once(demo):
    order = demo.orders["demo-01"]
    operation = get_catalog().lookup("cancel_order")
    args = dict(
        operation=operation,
        pk=order.pk,
        user=demo.users["support"],
        arguments={"reason": "customer_request"},
        via="api",
        represent=lambda instance: {"version": instance.version},
    )
    preview = perform(**args, preview=True)
    outcome = perform(**args, expected_version=preview.body["validForVersion"])
    assert outcome.body == {"version": order.version + 1}
    assert AuditRecord.objects.filter(object_id=str(order.pk)).count() == 1


# --- REST --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", "1"])
def test_rest_preview_leaves_the_database_as_it_was(api, demo, value):
    order = demo.orders["demo-01"]
    before = database_state()
    response = api("support").post(
        f"/api/orders/{order.pk}/cancel/?preview={value}",
        {"reason": "customer_request"},
        format="json",
        headers={"Idempotency-Key": "rest-preview-1"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["preview"] is True
    assert body["stateChange"] == {"field": "status", "from": "pending", "to": "cancelled"}
    assert body["validForVersion"] == order.version
    assert body["representation"]["status"] == "cancelled"
    assert body["representation"]["version"] == order.version + 1
    assert "ETag" not in response
    assert database_state() == before


def test_rest_preview_false_runs_and_a_bad_value_is_refused(api, demo):
    order = demo.orders["demo-01"]
    before = database_state()
    refused = api("support").post(
        f"/api/orders/{order.pk}/cancel/?preview=yes", {"reason": "customer_request"}, format="json"
    )
    assert refused.status_code == 400
    assert refused.json()["code"] == "validation_error"
    assert database_state() == before
    ran = api("support").post(
        f"/api/orders/{order.pk}/cancel/?preview=false",
        {"reason": "customer_request"},
        format="json",
    )
    assert ran.status_code == 200
    assert Order.objects.get(pk=order.pk).status == "cancelled"
    assert AuditRecord.objects.count() == before[1] + 1


def test_rest_preview_of_a_stale_version_is_stale(api, demo):
    order = demo.orders["demo-01"]
    response = api("support").post(
        f"/api/orders/{order.pk}/cancel/?preview=true",
        {"reason": "customer_request", "expectedVersion": order.version + 5},
        format="json",
    )
    assert response.status_code == 412
    assert response.json()["code"] == "stale_version"


def test_hal_forms_preview_embeds_the_would_be_object_without_forms(api, demo):
    order = demo.orders["demo-01"]
    before = database_state()
    response = api("support").post(
        f"/api/orders/{order.pk}/cancel/?preview=true",
        {"reason": "customer_request"},
        format="json",
        headers={"Accept": "application/prs.hal-forms+json"},
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["preview"] is True
    assert body["_templates"] == {}
    assert body["_embedded"]["representation"]["status"] == "cancelled"
    assert body["_links"]["self"]["href"].endswith(f"/api/orders/{order.pk}/")
    assert database_state() == before


def test_the_catalog_and_the_affordance_entry_say_confirmation_is_required(api, demo):
    catalog = api("support").get("/api/operations/").json()
    entries = {entry["name"]: entry for entry in catalog.get("operations", catalog)}
    assert entries["cancel_order"]["confirmationRequired"] is True
    assert "confirmationRequired" not in entries["confirm_order"]
    order = api("support").get(f"/api/orders/{demo.orders['demo-01'].pk}/").json()
    cancel = next(a for a in order["affordances"] if a["name"] == "cancel_order")
    assert cancel["confirmationRequired"] is True
    confirm = next(a for a in order["affordances"] if a["name"] == "confirm_order")
    assert "confirmationRequired" not in confirm
    compact = (
        api("support").get(f"/api/orders/{demo.orders['demo-01'].pk}/?affordances=compact").json()
    )
    assert all("confirmationRequired" not in a for a in compact["affordances"])
