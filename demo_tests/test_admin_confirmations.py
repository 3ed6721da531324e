"""The admin's confirmations (docs/protocol.md#confirmations): an untouched form runs
nothing, an operation that asks first shows its confirmation page, and only "Yes, I'm
sure" for the version previewed runs it."""

from __future__ import annotations

import pytest

from affordances.models import AuditRecord, IdempotencyRecord
from demo_tests.test_admin import (
    audit_count,
    change_url,
    login,
    messages_of,
    operation_url,
    parse,
    run,
    state,
)
from orders.models import Order

pytestmark = pytest.mark.django_db


def database_state() -> tuple:
    return (
        list(Order.objects.order_by("pk").values_list("pk", "status", "version")),
        AuditRecord.objects.count(),
        IdempotencyRecord.objects.count(),
    )


def test_an_untouched_form_runs_nothing(demo):
    order = demo.orders["demo-01"]
    client = login("support")
    page = parse(client.get(operation_url(order, "cancel_order")).content)
    # What the browser would post for the untouched form: the blank choice, the version.
    posted = {
        node.attrs["name"]: node.attrs.get("value", "")
        for node in page.find_all("input")
        if node.attrs.get("name") not in (None, "csrfmiddlewaretoken")
        and node.attrs.get("type") != "submit"
    }
    posted["reason"] = ""
    before = database_state()
    response = client.post(operation_url(order, "cancel_order"), posted)
    assert response.status_code == 400
    assert "This field is required." in response.content.decode()
    assert database_state() == before
    # Not even with "Yes" forged onto it: a required input is still required.
    response = client.post(operation_url(order, "cancel_order"), {**posted, "confirmed": "yes"})
    assert response.status_code == 400
    assert database_state() == before


def test_the_confirmation_page_previews_and_keeps_nothing(demo):
    order = demo.orders["demo-07"]  # delivered 3 days ago: refundable
    before = database_state()
    response = login("supervisor").post(
        operation_url(order, "refund_order"), {"amount": "100.00", "expectedVersion": "1"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f"Order #{order.pk} (300.00 EUR) will be refunded to alice" in html
    assert "status: delivered → refunded" in html
    assert database_state() == before


def test_a_refused_preview_is_reported_as_the_run_would_be(demo):
    order = demo.orders["demo-02"]  # 2500.00: support lacks the high-value permission
    response = login("support").post(
        operation_url(order, "cancel_order"),
        {"reason": "customer_request", "expectedVersion": "1"},
    )
    assert response.status_code == 302
    assert response["Location"] == change_url(order)
    assert any("requires_supervisor" in m for m in messages_of(response))
    assert audit_count() == 0


def test_yes_for_a_version_that_changed_meanwhile_runs_nothing(demo):
    order = demo.orders["demo-01"]
    client = login("support")
    asked = client.post(
        operation_url(order, "cancel_order"), {"reason": "customer_request", "expectedVersion": "1"}
    )
    hidden = {
        i.attrs["name"]: i.attrs["value"]
        for i in parse(asked.content).find_all("input", type="hidden")
        if i.attrs["name"] != "csrfmiddlewaretoken"
    }
    run(order, "confirm_order", "supervisor")  # someone else, while the page is open
    response = client.post(operation_url(order, "cancel_order"), hidden)
    assert response.status_code == 302
    assert any("changed since you opened it" in m for m in messages_of(response))
    assert state(order) == ("confirmed", 2)
    assert AuditRecord.objects.filter(operation_name="cancel_order").count() == 0
