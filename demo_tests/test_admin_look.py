"""The admin reads like Django's (issue 55): the operation form in Django's aligned layout
with its error note and the narrowed limits said before submitting, each error once, the
description in an operator's words, the object-tools where Django puts them, and every run
in Django's own admin log (its History page), told only as far as the viewer may know it.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType

from affordances.changelog import redacted
from demo_tests.test_admin import (
    change_url,
    login,
    operation_url,
    parse,
    run,
    state,
)
from orders.models import Order


def _log(order: Order) -> list[LogEntry]:
    return list(
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(Order), object_id=str(order.pk)
        ).order_by("pk")
    )


def test_the_operation_form_is_in_djangos_aligned_layout_and_says_the_limits_first(demo):
    order = demo.orders["demo-07"]  # delivered, total 300.00: the refund's narrowed maximum
    page = parse(login("supervisor").get(operation_url(order, "refund_order")).content)
    (form,) = page.find_all("form", data_operation="refund_order")
    (fieldset,) = form.find_all("fieldset")
    assert {"module", "aligned"} <= fieldset.classes
    rows = fieldset.with_class("form-row")
    assert [sorted(row.classes - {"form-row"}) for row in rows] == [
        ["field-amount"],
        ["field-note"],
    ]
    # Before anything is submitted: the bound this order and user allow, in words.
    (amount_help,) = rows[0].with_class("help")
    assert "At least 0.01 and at most 300.00." in amount_help.text
    (note_help,) = rows[1].with_class("help")
    assert "At most 500 characters." in note_help.text
    assert form.with_class("errornote") == []
    # Django's own buttons: the submit row, the run and a way back.
    (submit_row,) = form.with_class("submit-row")
    (run_button,) = submit_row.find_all("input", type="submit")
    assert run_button.attrs["value"] == "Refund order"
    (back,) = submit_row.with_class("closelink")
    assert back.attrs["href"] == change_url(order)


def test_an_invalid_argument_gets_the_error_note_and_its_error_once(demo):
    order = demo.orders["demo-07"]
    response = login("supervisor").post(
        operation_url(order, "refund_order"), {"amount": "300.01", "expectedVersion": "1"}
    )
    assert response.status_code == 400
    page = parse(response.content)
    (form,) = page.find_all("form", data_operation="refund_order")
    (note,) = form.with_class("errornote")
    assert note.text == "Please correct the error below."
    errors = [item.text for node in form.with_class("errorlist") for item in node.find_all("li")]
    # The execution path's verdict, once; not also the form's own in other words.
    assert errors == ["Must be at most 300.00."]
    assert "Ensure this value" not in response.content.decode()
    (row,) = [row for row in form.with_class("form-row") if "field-amount" in row.classes]
    assert "errors" in row.classes
    assert state(order) == ("delivered", 1)


@pytest.mark.parametrize(
    ("name", "key", "said", "unsaid"),
    [
        (
            "cancel_order",
            "demo-01",
            ["<em>Customer request</em>", "<em>Pending</em> or <em>Confirmed</em>"],
            ["orders.cancel_order", "orders.cancel_high_value_order", "customer_request"],
        ),
        (
            "refund_order",
            "demo-07",
            ["<em>Delivered</em>", "<code>refund_window_expired</code>"],
            ["orders.refund_order", "Requires the"],
        ),
    ],
)
def test_the_description_is_in_an_operators_words(demo, name, key, said, unsaid):
    html = login("admin").get(operation_url(demo.orders[key], name)).content.decode()
    start = html.index('class="affordance-description"')
    description = html[start : html.index("</div>", start)]
    assert "`" not in description
    for text in said:
        assert text in description
    for text in unsaid:
        assert text not in description


def test_object_tools_lead_the_content_and_the_panel_and_history_are_inside_it(demo):
    page = parse(login("admin").get(change_url(demo.orders["demo-01"])).content)
    (main,) = page.find_all("div", id="content-main")
    order = [
        node
        for node in main.iter()
        if "object-tools" in node.classes
        or node.attrs.get("id") in ("affordances-panel", "affordances-history")
        or (node.tag == "form" and node.attrs.get("id") == "order_form")
    ]
    assert [node.attrs.get("id") or "object-tools" for node in order] == [
        "object-tools",
        "affordances-panel",
        "order_form",
        "affordances-history",
    ]
    (tools,) = main.with_class("object-tools")
    assert [a.text for a in tools.find_all("a")] == ["History", "Operations"]
    (panel,) = main.find_all(id="affordances-panel")
    assert panel.with_class("object-tools") == []
    # One button style: every operation is Django's .button, none the primary "default".
    buttons = panel.with_class("affordance-button")
    assert buttons and all("button" in b.classes and "default" not in b.classes for b in buttons)


def test_runs_of_every_face_are_in_djangos_admin_log(demo):
    order = demo.orders["demo-01"]
    run(order, "confirm_order", "supervisor", via="api")
    run(order, "cancel_order", "support", {"reason": "inventory_failure", "note": "gone"})
    confirm, cancel = _log(order)
    assert (confirm.user.username, confirm.action_flag) == ("supervisor", CHANGE)
    assert confirm.get_change_message() == "Confirm order: Pending → Confirmed."
    assert cancel.get_change_message() == (
        "Cancel order: Confirmed → Cancelled. Reason: Inventory failure; Note: gone."
    )
    assert cancel.object_repr == str(Order.objects.get(pk=order.pk))

    # Django's own History page shows them, to a viewer who may know the operations.
    html = login("admin").get(f"{change_url(order)[: -len('change/')]}history/").content.decode()
    assert "Cancel order: Confirmed → Cancelled. Reason: Inventory failure; Note: gone." in html
    assert "no change history" not in html.lower()


@pytest.mark.parametrize("viewer", ["auditor", "warehouse"])
def test_djangos_history_page_hides_operations_the_viewer_may_not_know(demo, viewer):
    order = demo.orders["demo-01"]
    run(order, "cancel_order", "support", {"reason": "inventory_failure"})
    response = login(viewer).get(f"/admin/orders/order/{order.pk}/history/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Pending → Cancelled." in html  # the object's own history stays visible
    for hidden in ("Cancel order", "cancel_order", "Inventory failure", "inventory_failure"):
        assert hidden not in html


def test_a_create_is_an_addition_and_an_admin_edit_is_logged_once(demo):
    client = login("admin")
    response = client.post(
        "/admin/orders/order/add/", {"description": "Gift", "total": "10.00", "customer": "alice"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    created = Order.objects.get(description="Gift")
    (addition,) = _log(created)
    assert addition.action_flag == ADDITION
    assert addition.get_change_message().startswith("Create order: ")

    order = demo.orders["demo-01"]
    response = client.post(
        change_url(order),
        {
            "customer": str(order.customer_id),
            "description": "Gift wrapped",
            "total": "250.00",
            "currency": "EUR",
            "payment_status": "authorized",
            "tracking_number": "",
            "delivered_at_0": "",
            "delivered_at_1": "",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    # Django's change form logs its own save; the library does not write it again.
    (edit,) = _log(order)
    assert edit.get_change_message() == "Changed Description."


def test_redacted_keeps_only_the_change_of_state():
    said = "Cancel order: Pending → Cancelled. Reason: Inventory failure."
    assert redacted(said, {"Cancel order"}) == "Pending → Cancelled."
    assert redacted(said, {"Confirm order"}) is None
    assert redacted("Cancel order line: A → B.", {"Cancel order"}) is None
