"""The affordance-aware admin (docs/demo.md#orders, docs/howto/admin.md): panel, forms, refusals,
history, bulk, catalog.

Every expectation about which operation applies to which order for which role comes from
the oracle (demo_tests/oracle.py), written from the tables of docs/demo.md#orders and the
demo data of docs/demo.md#demo-data — not from the code under test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import AuditRecord
from demo_tests.conftest import DEMO_PASSWORD
from demo_tests.oracle import (
    CUSTOMERS,
    DEMO,
    STAFF,
    TRANSITIONS,
    WITH_INPUTS,
    oracle,
    transitions_of,
)
from orders.models import Order

# --------------------------------------------------------------------------------------
# The oracle (demo_tests/oracle.py), as this file reads it.
# --------------------------------------------------------------------------------------

# Catalog (declaration) order of the transitions, with their titles and source states.
OPERATIONS: dict[str, tuple[str, frozenset[str]]] = {
    name: (transition.title, transition.sources) for name, transition in TRANSITIONS.items()
}
TITLES = {name: title for name, (title, _) in OPERATIONS.items()}
ALL = frozenset(OPERATIONS)
CAPABILITIES: dict[str, frozenset[str]] = {role: frozenset(transitions_of(role)) for role in STAFF}


def test_the_oracle_matches_the_catalog_it_is_checked_against():
    # Guards the oracle itself: the same operations, titles and sources as the catalog.
    transitions = get_catalog().transitions_for(Order)
    assert [op.name for op in transitions] == list(OPERATIONS)
    assert {op.name: op.title for op in transitions} == TITLES
    assert {op.name: frozenset(op.facts.sources) for op in transitions} == {
        name: sources for name, (_, sources) in OPERATIONS.items()
    }


# --------------------------------------------------------------------------------------
# A tiny HTML tree, so assertions talk about elements and attributes, not substrings.
# --------------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


@dataclass(eq=False)
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = [c if isinstance(c, str) else c.text for c in self.children]
        return re.sub(r"\s+", " ", "".join(parts)).strip()

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self):
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str | None) -> list[Node]:
        found = []
        for node in self.iter():
            if tag is not None and node.tag != tag:
                continue
            if all(
                (name in node.attrs) if value is None else node.attrs.get(name) == value
                for name, value in ((k.replace("_", "-"), v) for k, v in attrs.items())
            ):
                found.append(node)
        return found

    def with_class(self, name: str) -> list[Node]:
        return [node for node in self.iter() if name in node.classes]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: bytes | str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html.decode() if isinstance(html, bytes) else html)
    builder.close()
    return builder.root


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------

CHANGELIST = "/admin/orders/order/"
CATALOG = "/admin/orders/order/catalog/"


def change_url(order: Order) -> str:
    return f"/admin/orders/order/{order.pk}/change/"


def operation_url(order: Order, name: str) -> str:
    return f"/admin/orders/order/{order.pk}/operation/{name}/"


def login(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=DEMO_PASSWORD)
    return client


def messages_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def panel(page: Node) -> Node:
    (found,) = page.find_all(id="affordances-panel")
    return found


def available_buttons(page: Node) -> dict[str, Node]:
    buttons = [node for node in panel(page).with_class("affordance-button")]
    return {node.attrs["data-operation"]: node for node in buttons}


def unavailable_items(page: Node) -> dict[str, Node]:
    return {
        node.attrs["data-operation"]: node
        for node in panel(page).find_all("li", data_operation=None, data_reason=None)
    }


def history_rows(page: Node) -> list[list[str]]:
    (history,) = page.find_all(id="affordances-history")
    return [[td.text for td in row.find_all("td")] for row in history.with_class("audit-record")]


def label_of(button: Node) -> str:
    return button.attrs["value"] if button.tag == "input" else button.text


def no_trace_of(html: str, names) -> list[str]:
    """The names and titles of ``names`` that occur anywhere in ``html`` (should be [])."""
    return [needle for name in sorted(names) for needle in (name, TITLES[name]) if needle in html]


def audit_count() -> int:
    return AuditRecord.objects.count()


def state(order: Order) -> tuple[str, int]:
    order.refresh_from_db()
    return order.status, order.version


def _represent(instance) -> dict:
    return {"id": instance.pk}


def run(order: Order, name: str, username: str, arguments: dict | None = None, via="api"):
    """Change an order behind the admin's back, through the one execution path."""
    from django.contrib.auth import get_user_model

    perform(
        operation=get_catalog().lookup(name),
        pk=order.pk,
        user=get_user_model().objects.get(username=username),
        arguments=arguments or {},
        via=via,
        represent=_represent,
    )


# --------------------------------------------------------------------------------------
# Access
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("username", CUSTOMERS)
def test_customers_are_not_staff_and_are_sent_to_the_login_page(demo, username):
    client = login(username)
    order = demo.orders["demo-01"]
    for url in (
        change_url(order),
        operation_url(order, "cancel_order"),
        CHANGELIST,
        CATALOG,
    ):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url
    response = login(username).post(
        operation_url(order, "cancel_order"), {"reason": "customer_request"}
    )
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    assert state(order) == ("pending", 1)
    assert audit_count() == 0


def test_anonymous_visitors_are_sent_to_the_login_page(demo):
    response = Client().get(change_url(demo.orders["demo-01"]))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


# --------------------------------------------------------------------------------------
# The Actions panel, per role and order (docs/demo.md#orders by docs/demo.md#demo-data)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(DEMO))
@pytest.mark.parametrize("role", STAFF)
def test_actions_panel_offers_exactly_what_spec_8_allows(demo, role, key):
    order = demo.orders[key]
    response = login(role).get(change_url(order))
    assert response.status_code == 200
    html = response.content.decode()
    page = parse(html)
    expected_available, expected_unavailable = oracle(role, key)

    buttons = available_buttons(page)
    assert list(buttons) == expected_available
    for name, button in buttons.items():
        assert label_of(button) == TITLES[name]
        if name in WITH_INPUTS:
            # Operations with inputs open their argument form.
            assert button.tag == "a"
            assert button.attrs["href"] == operation_url(order, name)
        else:
            # Operations without inputs post straight away, with the rendered version.
            assert (button.tag, button.attrs["type"]) == ("input", "submit")
            (form,) = [f for f in page.find_all("form") if any(node is button for node in f.iter())]
            assert form.attrs["action"] == operation_url(order, name)
            assert form.attrs["method"] == "post"
            (version,) = form.find_all("input", name="expectedVersion")
            assert version.attrs["value"] == "1"

    items = unavailable_items(page)
    assert {name: item.attrs["data-reason"] for name, item in items.items()} == (
        expected_unavailable
    )
    for name, item in items.items():
        reason = expected_unavailable[name]
        assert item.text == f"{TITLES[name]} — {reason.replace('_', ' ')} ({reason})"

    if not expected_available:
        assert panel(page).with_class("affordances-none")

    # Operations the role lacks the capability for appear nowhere on the page.
    assert no_trace_of(html, ALL - CAPABILITIES[role]) == []


@pytest.mark.parametrize("role", STAFF)
def test_status_is_shown_read_only_on_the_change_page(demo, role):
    page = parse(login(role).get(change_url(demo.orders["demo-05"])).content)
    editable = [
        node
        for node in page.iter()
        if node.tag in {"input", "select", "textarea"} and node.attrs.get("name") == "status"
    ]
    assert editable == []
    (row,) = page.with_class("field-status")
    (shown,) = row.with_class("readonly")
    assert shown.text == "Confirmed"


def test_posting_a_status_in_the_change_form_does_not_change_it(demo):
    # The superuser may edit the other fields; status is not among them.
    order = demo.orders["demo-01"]
    client = login("admin")
    response = client.post(
        change_url(order),
        {
            "customer": str(order.customer_id),
            "description": order.description,
            "total": "250.00",
            "currency": "EUR",
            "payment_status": "authorized",
            "tracking_number": "",
            "delivered_at_0": "",
            "delivered_at_1": "",
            "status": "delivered",
            "version": "99",
            "_save": "Save",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert state(order) == ("pending", 1)
    assert audit_count() == 0


# --------------------------------------------------------------------------------------
# Argument forms
# --------------------------------------------------------------------------------------


def _options(page: Node, name: str) -> list[str]:
    (select,) = page.find_all("select", name=name)
    return [option.attrs["value"] for option in select.find_all("option")]


def test_cancel_form_offers_only_the_reasons_allowed_for_an_unfailed_payment(demo):
    order = demo.orders["demo-03"]  # pending, payment pending
    response = login("support").get(operation_url(order, "cancel_order"))
    assert response.status_code == 200
    page = parse(response.content)
    # A required choice starts blank (an untouched form chooses nothing) and is required.
    assert _options(page, "reason") == ["", "customer_request", "inventory_failure"]
    (select,) = page.find_all("select", name="reason")
    assert "required" in select.attrs


def test_cancel_form_offers_payment_failure_when_the_payment_failed(demo):
    order = demo.orders["demo-04"]  # pending, payment failed
    page = parse(login("support").get(operation_url(order, "cancel_order")).content)
    assert _options(page, "reason") == [
        "",
        "customer_request",
        "payment_failure",
        "inventory_failure",
    ]


def test_refund_form_bounds_the_amount_by_the_order_total(demo):
    order = demo.orders["demo-07"]  # delivered 3 days ago, total 300.00
    response = login("supervisor").get(operation_url(order, "refund_order"))
    assert response.status_code == 200
    (amount,) = parse(response.content).find_all("input", name="amount")
    assert Decimal(amount.attrs["max"]) == Decimal("300")
    assert Decimal(amount.attrs["min"]) > 0


def test_ship_form_asks_for_the_tracking_number(demo):
    order = demo.orders["demo-05"]
    page = parse(login("warehouse").get(operation_url(order, "ship_order")).content)
    (tracking,) = page.find_all("input", name="trackingNumber")
    assert "required" in tracking.attrs


@pytest.mark.parametrize(
    ("role", "key", "name"),
    [
        ("support", "demo-03", "cancel_order"),
        ("supervisor", "demo-07", "refund_order"),
        ("warehouse", "demo-05", "ship_order"),
    ],
)
def test_the_form_carries_the_version_it_was_rendered_for(demo, role, key, name):
    order = demo.orders[key]
    if key == "demo-03":
        # Move the version on first, so the carried value is not just the default.
        Order.objects.filter(pk=order.pk).update(version=4)
    page = parse(login(role).get(operation_url(order, name)).content)
    (form,) = page.find_all("form", data_operation=name)
    (version,) = form.find_all("input", name="expectedVersion")
    assert version.attrs["type"] == "hidden"
    assert version.attrs["value"] == str(Order.objects.get(pk=order.pk).version)


def test_the_form_of_an_operation_the_role_lacks_is_not_there(demo):
    order = demo.orders["demo-05"]
    client = login("warehouse")
    assert client.get(operation_url(order, "cancel_order")).status_code == 404
    response = client.post(
        operation_url(order, "cancel_order"), {"reason": "customer_request", "expectedVersion": "1"}
    )
    assert response.status_code == 404
    assert state(order) == ("confirmed", 1)
    assert audit_count() == 0


def test_opening_the_form_of_an_unavailable_operation_explains_why(demo):
    order = demo.orders["demo-02"]  # high value: support may not cancel it
    response = login("support").get(operation_url(order, "cancel_order"))
    assert response.status_code == 302
    assert response["Location"] == change_url(order)
    assert messages_of(response) == ["Cancel order is no longer available: requires_supervisor"]


# --------------------------------------------------------------------------------------
# Stale forms, refusals, validation errors, success
# --------------------------------------------------------------------------------------


def test_a_stale_form_is_refused_with_the_current_state_and_nothing_changes(demo, api):
    order = demo.orders["demo-01"]
    client = login("support")
    page = parse(client.get(operation_url(order, "cancel_order")).content)
    (version,) = page.find_all("input", name="expectedVersion")
    assert version.attrs["value"] == "1"

    # Meanwhile someone confirms the order through the REST API.
    assert (
        api("supervisor").post(f"/api/orders/{order.pk}/confirm/", {}, format="json").status_code
        == 200
    )
    assert state(order) == ("confirmed", 2)
    records = audit_count()

    response = client.post(
        operation_url(order, "cancel_order"),
        {"reason": "customer_request", "note": "", "expectedVersion": version.attrs["value"]},
    )
    assert response.status_code == 302
    assert response["Location"] == change_url(order)
    (message,) = messages_of(response)
    assert message.startswith("This order changed since you opened it")
    assert "confirmed" in message
    assert "version 2" in message
    assert state(order) == ("confirmed", 2)
    assert audit_count() == records


def test_a_stale_button_without_inputs_is_refused_too(demo):
    order = demo.orders["demo-01"]
    client = login("support")
    page = parse(client.get(change_url(order)).content)
    assert "confirm_order" in available_buttons(page)  # the page offers it at version 1
    run(order, "cancel_order", "supervisor", {"reason": "inventory_failure"})
    records = audit_count()

    response = client.post(
        operation_url(order, "confirm_order"), {"expectedVersion": "1"}, follow=True
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "This order changed since you opened it" in html
    assert "It is now cancelled (version 2)" in html
    assert state(order) == ("cancelled", 2)
    assert audit_count() == records
    # The page shown is the change page with the current state: no confirm button any more.
    assert "confirm_order" not in available_buttons(parse(html))


def test_a_refused_action_shows_the_reason_and_runs_nothing(demo):
    order = demo.orders["demo-09"]  # cancelled
    response = login("support").post(
        operation_url(order, "confirm_order"), {"expectedVersion": "1"}, follow=True
    )
    assert response.status_code == 200
    assert "Confirm order is no longer available: order_cancelled" in response.content.decode()
    assert state(order) == ("cancelled", 1)
    assert audit_count() == 0


def test_a_refused_cancel_of_an_already_cancelled_order_names_already_cancelled(demo):
    order = demo.orders["demo-09"]
    response = login("supervisor").post(
        operation_url(order, "cancel_order"),
        {"reason": "customer_request", "expectedVersion": "1"},
    )
    assert response.status_code == 302
    assert messages_of(response) == ["Cancel order is no longer available: already_cancelled"]
    assert state(order) == ("cancelled", 1)
    assert audit_count() == 0


def test_a_bad_tracking_number_re_renders_the_form_with_the_error(demo):
    order = demo.orders["demo-05"]  # confirmed
    response = login("warehouse").post(
        operation_url(order, "ship_order"),
        {"trackingNumber": "not-valid-1", "expectedVersion": "1"},
    )
    assert response.status_code == 400
    page = parse(response.content)
    (form,) = page.find_all("form", data_operation="ship_order")
    errors = " ".join(node.text for node in form.with_class("errorlist"))
    assert "Use 8 to 20 capital letters or digits." in errors
    (tracking,) = form.find_all("input", name="trackingNumber")
    assert tracking.attrs["value"] == "not-valid-1"
    assert state(order) == ("confirmed", 1)
    assert Order.objects.get(pk=order.pk).tracking_number is None
    assert audit_count() == 0


def test_a_reason_outside_the_narrowed_choices_is_refused_by_execution(demo):
    # The form offers no payment_failure for an authorized payment; posting it anyway
    # is caught by the execution path, which re-checks the constraints.
    order = demo.orders["demo-01"]
    response = login("support").post(
        operation_url(order, "cancel_order"),
        {"reason": "payment_failure", "expectedVersion": "1"},
    )
    assert response.status_code == 400
    assert "customer_request" in response.content.decode()
    assert state(order) == ("pending", 1)
    assert audit_count() == 0


def test_a_successful_cancel_shows_the_new_state_and_is_audited_via_admin(demo):
    order = demo.orders["demo-03"]
    client = login("support")
    arguments = {"reason": "inventory_failure", "note": "out of stock", "expectedVersion": "1"}
    # Cancelling asks first: the confirmation page, its consequence and the preview's change.
    asked = client.post(operation_url(order, "cancel_order"), arguments)
    assert asked.status_code == 200
    html = asked.content.decode()
    assert f"Order #{order.pk} (80.00 EUR, Demo order demo-03) will be cancelled" in html
    assert "status: pending → cancelled" in html
    assert "Yes, I\u2019m sure" in html and "No, take me back" in html
    page = parse(html)
    hidden = {i.attrs["name"]: i.attrs["value"] for i in page.find_all("input", type="hidden")}
    assert hidden["reason"] == "inventory_failure" and hidden["note"] == "out of stock"
    assert (hidden["expectedVersion"], hidden["confirmed"]) == ("1", "yes")
    (back,) = page.with_class("cancel-link")
    assert back.attrs["href"] == change_url(order)
    assert state(order) == ("pending", 1)
    assert audit_count() == 0

    response = client.post(operation_url(order, "cancel_order"), {**arguments, "confirmed": "yes"})
    assert response.status_code == 302
    assert response["Location"] == change_url(order)
    assert messages_of(response) == ["Cancel order: done. The order is now cancelled (version 2)."]
    assert state(order) == ("cancelled", 2)
    (record,) = AuditRecord.objects.all()
    assert (record.operation_name, record.source_state, record.target_state) == (
        "cancel_order",
        "pending",
        "cancelled",
    )
    assert (record.username, record.via, record.version) == ("support", "admin", 2)
    assert record.arguments == {"reason": "inventory_failure", "note": "out of stock"}


def test_a_successful_button_without_inputs_runs_and_the_page_shows_the_new_state(demo):
    order = demo.orders["demo-06"]  # shipped
    response = login("warehouse").post(
        operation_url(order, "deliver_order"), {"expectedVersion": "1"}, follow=True
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "Mark order delivered: done. The order is now delivered (version 2)." in html
    page = parse(html)
    (row,) = page.with_class("field-status")
    assert row.with_class("readonly")[0].text == "Delivered"
    assert {n: i.attrs["data-reason"] for n, i in unavailable_items(page).items()} == {
        "ship_order": "already_shipped",
        "deliver_order": "already_delivered",
    }
    assert state(order) == ("delivered", 2)
    (record,) = AuditRecord.objects.all()
    assert (record.via, record.username) == ("admin", "warehouse")


def test_a_supervisor_refund_within_the_total_succeeds(demo):
    order = demo.orders["demo-07"]
    response = login("supervisor").post(
        operation_url(order, "refund_order"),
        {"amount": "120.50", "expectedVersion": "1", "confirmed": "yes"},
    )
    assert response.status_code == 302
    assert messages_of(response) == ["Refund order: done. The order is now refunded (version 2)."]
    (record,) = AuditRecord.objects.all()
    assert Decimal(str(record.arguments["amount"])) == Decimal("120.50")


def test_a_refund_above_the_total_is_refused_and_changes_nothing(demo):
    order = demo.orders["demo-07"]
    response = login("supervisor").post(
        operation_url(order, "refund_order"), {"amount": "300.01", "expectedVersion": "1"}
    )
    assert response.status_code == 400
    assert "Must be at most 300" in response.content.decode()
    assert state(order) == ("delivered", 1)
    assert audit_count() == 0


def test_editing_an_order_in_the_admin_makes_open_operation_forms_stale(demo):
    # The issue: "The form carries the version it was rendered for; if the order changed
    # meanwhile, nothing runs". A superuser editing the order's fields is such a change,
    # and the version is the strong validator (ETag) of the representation
    # (docs/protocol.md#affordances).
    order = demo.orders["demo-01"]
    support = login("support")
    page = parse(support.get(operation_url(order, "cancel_order")).content)
    (version,) = page.find_all("input", name="expectedVersion")

    response = login("admin").post(
        change_url(order),
        {
            "customer": str(order.customer_id),
            "description": "Customer asked for gift wrapping",
            "total": "260.00",
            "currency": "EUR",
            "payment_status": "authorized",
            "tracking_number": "",
            "delivered_at_0": "",
            "delivered_at_1": "",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    # The description is edited; the total is a rule's fact (the supervisor's threshold,
    # the refund maximum) and not editable in the admin: the posted one is ignored.
    edited = Order.objects.get(pk=order.pk)
    assert (edited.description, edited.total) == (
        "Customer asked for gift wrapping",
        Decimal("250.00"),
    )

    response = support.post(
        operation_url(order, "cancel_order"),
        {"reason": "customer_request", "expectedVersion": version.attrs["value"]},
    )
    assert messages_of(response)[0].startswith("This order changed since you opened it")
    assert Order.objects.get(pk=order.pk).status == "pending"
    # The edit itself is the one record: the refused operation wrote nothing.
    (edit,) = AuditRecord.objects.all()
    assert (edit.operation_name, edit.arguments["changed"]) == ("edit_order", ["description"])
    assert edit.arguments["to"] == {"description": "Customer asked for gift wrapping"}
    assert set(edit.arguments["from"]) == {"description"}


# --------------------------------------------------------------------------------------
# History
# --------------------------------------------------------------------------------------


def test_history_lists_who_what_when_from_to_arguments_and_interface(demo, api):
    order = demo.orders["demo-01"]
    assert (
        api("support").post(f"/api/orders/{order.pk}/confirm/", {}, format="json").status_code
        == 200
    )
    client = login("support")
    response = client.post(
        operation_url(order, "cancel_order"),
        {
            "reason": "customer_request",
            "note": "changed mind",
            "expectedVersion": "2",
            "confirmed": "yes",
        },
    )
    assert response.status_code == 302
    other = demo.orders["demo-10"]
    run(other, "confirm_order", "supervisor")  # another order's history stays there

    page = parse(client.get(change_url(order)).content)
    rows = history_rows(page)
    assert len(rows) == 2
    (history,) = page.find_all(id="affordances-history")
    headers = [th.text for th in history.find_all("th")]
    assert headers[:6] == ["Time", "User", "Operation", "From → to", "Arguments", "Via"]

    # In words: the operation's title, the states' labels, the arguments by their labels
    # (a choice by its label) in a definition list, the interface by its label.
    newest, oldest = rows
    assert newest[1:4] == ["support", "Cancel order", "Confirmed → Cancelled"]
    assert newest[5] == "Admin"
    newest_row = history.with_class("audit-record")[0]
    assert newest_row.attrs["data-operation"] == "cancel_order"
    (arguments,) = newest_row.find_all("dl")
    terms = [(n.tag, n.text) for n in arguments.iter() if n.tag in ("dt", "dd")]
    assert terms == [
        ("dt", "Reason"),
        ("dd", "Customer request"),
        ("dt", "Note"),
        ("dd", "changed mind"),
    ]
    assert oldest[1:6] == ["support", "Confirm order", "Pending → Confirmed", "—", "REST API"]
    for row in rows:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row[0])

    # Read-only: nothing in the history is a form control.
    assert [n for n in history.iter() if n.tag in {"form", "input", "select", "textarea"}] == []


def test_history_of_an_untouched_order_says_so(demo):
    page = parse(login("auditor").get(change_url(demo.orders["demo-05"])).content)
    assert history_rows(page) == []
    (history,) = page.find_all(id="affordances-history")
    assert "No operation has run on this order yet." in history.text


def test_audit_records_cannot_be_edited_in_the_admin(demo):
    run(demo.orders["demo-01"], "confirm_order", "support")
    record = AuditRecord.objects.get()
    client = login("admin")
    assert client.get("/admin/affordances/auditrecord/add/").status_code == 403
    response = client.post(
        f"/admin/affordances/auditrecord/{record.pk}/change/",
        {"operation_name": "ship_order", "target_state": "shipped"},
    )
    assert response.status_code == 403
    record.refresh_from_db()
    assert (record.operation_name, record.target_state) == ("confirm_order", "confirmed")
    assert client.post(f"/admin/affordances/auditrecord/{record.pk}/delete/").status_code == 403
    assert AuditRecord.objects.filter(pk=record.pk).exists()


# --------------------------------------------------------------------------------------
# Change list
# --------------------------------------------------------------------------------------


def _rows_by_pk(page: Node) -> dict[int, Node]:
    rows = {}
    for row in page.find_all("tr"):
        ids = row.with_class("field-id")
        if ids:
            rows[int(ids[0].text)] = row
    return rows


@pytest.mark.parametrize("role", STAFF)
def test_change_list_shows_the_operations_available_to_the_current_user(demo, role):
    response = login(role).get(CHANGELIST)
    assert response.status_code == 200
    html = response.content.decode()
    page = parse(html)
    assert "Available operations" in [th.text for th in page.find_all("th")]
    rows = _rows_by_pk(page)
    assert len(rows) == len(DEMO)
    for key, order in demo.orders.items():
        (cell,) = rows[order.pk].with_class("field-available_operations")
        expected = [TITLES[name] for name in oracle(role, key)[0]]
        assert cell.text == (", ".join(expected) or "—"), key

    # One admin action per operation the role may run; nothing of the others.
    # (The auditor has no action at all, so Django renders no action menu.)
    options = {
        option.attrs["value"]: option.text
        for menu in page.find_all("select", name="action")
        for option in menu.find_all("option")
        if option.attrs["value"]
    }
    operation_actions = {
        value: text for value, text in options.items() if value.startswith("operation_")
    }
    assert operation_actions == {
        f"operation_{name}": f"{TITLES[name]} (selected)"
        for name in OPERATIONS
        if name in CAPABILITIES[role]
    }
    assert no_trace_of(html, ALL - CAPABILITIES[role]) == []


def test_change_list_filters_by_status_and_customer(demo):
    client = login("auditor")
    page = parse(client.get(CHANGELIST).content)
    (filters,) = page.find_all(id="changelist-filter")
    titles = {node.attrs["data-filter-title"] for node in filters.find_all(data_filter_title=None)}
    assert {"status", "customer"} <= titles

    pending = _rows_by_pk(parse(client.get(CHANGELIST, {"status__exact": "pending"}).content))
    assert set(pending) == {
        demo.orders[key].pk for key, spec in DEMO.items() if spec.status == "pending"
    }
    bob = demo.users["bob"]
    bobs = _rows_by_pk(parse(client.get(CHANGELIST, {"customer__id__exact": bob.pk}).content))
    assert set(bobs) == {demo.orders[key].pk for key in ("demo-10", "demo-11", "demo-12")}


# --------------------------------------------------------------------------------------
# Bulk actions
# --------------------------------------------------------------------------------------


def test_bulk_confirm_reports_each_order_success_or_refusal(demo):
    keys = ("demo-01", "demo-03", "demo-05")
    orders = [demo.orders[key] for key in keys]
    response = login("support").post(
        CHANGELIST,
        {
            "action": "operation_confirm_order",
            "_selected_action": [str(order.pk) for order in orders],
            "index": "0",
            "select_across": "0",
        },
    )
    assert response.status_code == 302
    messages = messages_of(response)
    assert len(messages) == 3
    one, three, five = orders
    assert f"Order #{one.pk} (confirmed): Confirm order done — now confirmed." in messages
    assert (
        f"Order #{three.pk} (pending): Confirm order refused — payment_not_authorized" in messages
    )
    assert f"Order #{five.pk} (confirmed): Confirm order refused — already_confirmed" in messages

    assert state(one) == ("confirmed", 2)
    assert state(three) == ("pending", 1)
    assert state(five) == ("confirmed", 1)
    (record,) = AuditRecord.objects.all()
    assert (record.object_id, record.via, record.username) == (str(one.pk), "admin", "support")


def test_bulk_cancel_asks_for_the_arguments_first_then_reports_each_order(demo):
    high, bobs = demo.orders["demo-02"], demo.orders["demo-10"]
    client = login("support")
    selected = [str(high.pk), str(bobs.pk)]
    response = client.post(
        CHANGELIST,
        {"action": "operation_cancel_order", "_selected_action": selected, "index": "0"},
    )
    # The intermediate form: nothing ran yet.
    assert response.status_code == 200
    page = parse(response.content)
    assert "customer_request" in _options(page, "reason")
    hidden = sorted(n.attrs["value"] for n in page.find_all("input", name="_selected_action"))
    assert hidden == sorted(selected)
    (action,) = page.find_all("input", name="action")
    assert action.attrs["value"] == "operation_cancel_order"
    assert state(high) == ("pending", 1)
    assert state(bobs) == ("pending", 1)
    assert audit_count() == 0

    applied = {
        "action": "operation_cancel_order",
        "_selected_action": selected,
        "apply": "1",
        "reason": "customer_request",
    }
    # Before anything runs: each order's preview, the refusals listed.
    review = client.post(CHANGELIST, applied)
    assert review.status_code == 200
    html = review.content.decode()
    assert f"Order #{high.pk} (pending): would be refused — requires_supervisor" in html
    assert f"Order #{bobs.pk} (pending): status: pending → cancelled" in html
    assert "1 of 2 selected would run" in html
    assert "No, take me back" in html
    assert (state(high), state(bobs), audit_count()) == (("pending", 1), ("pending", 1), 0)

    response = client.post(CHANGELIST, {**applied, "confirmed": "yes"})
    assert response.status_code == 302
    messages = messages_of(response)
    assert len(messages) == 2
    assert f"Order #{high.pk} (pending): Cancel order refused — requires_supervisor" in messages
    assert f"Order #{bobs.pk} (cancelled): Cancel order done — now cancelled." in messages
    assert state(high) == ("pending", 1)
    assert state(bobs) == ("cancelled", 2)
    (record,) = AuditRecord.objects.all()
    assert (record.object_id, record.arguments) == (str(bobs.pk), {"reason": "customer_request"})
    assert record.via == "admin"


def test_bulk_cancel_rechecks_the_constraints_per_order(demo):
    # payment_failure is allowed for demo-04 (payment failed) only.
    failed, authorized = demo.orders["demo-04"], demo.orders["demo-01"]
    response = login("support").post(
        CHANGELIST,
        {
            "action": "operation_cancel_order",
            "_selected_action": [str(failed.pk), str(authorized.pk)],
            "apply": "1",
            "reason": "payment_failure",
            "confirmed": "yes",
        },
    )
    assert response.status_code == 302
    messages = messages_of(response)
    assert f"Order #{failed.pk} (cancelled): Cancel order done — now cancelled." in messages
    (refusal,) = [m for m in messages if m.startswith(f"Order #{authorized.pk} ")]
    assert "Cancel order refused" in refusal
    assert "reason" in refusal
    assert state(failed) == ("cancelled", 2)
    assert state(authorized) == ("pending", 1)


def test_a_bulk_action_the_role_lacks_runs_nothing(demo):
    order = demo.orders["demo-05"]
    response = login("warehouse").post(
        CHANGELIST,
        {
            "action": "operation_cancel_order",
            "_selected_action": [str(order.pk)],
            "apply": "1",
            "reason": "customer_request",
        },
    )
    assert response.status_code in {200, 302}
    assert state(order) == ("confirmed", 1)
    assert audit_count() == 0


# --------------------------------------------------------------------------------------
# Catalog page
# --------------------------------------------------------------------------------------


def _catalog_sections(page: Node) -> dict[str, Node]:
    return {
        node.attrs["id"].removeprefix("operation-"): node
        for node in page.with_class("operation")
        if node.attrs.get("id", "").startswith("operation-")
    }


@pytest.mark.parametrize("role", STAFF)
def test_catalog_page_lists_the_operations_the_user_may_know_about(demo, role):
    response = login(role).get(CATALOG)
    assert response.status_code == 200
    sections = _catalog_sections(parse(response.content))
    # docs/demo.md#orders: add_order
    creates = ["create_order"] if role in ("admin", "support") else []
    expected = ["get_order", "list_orders", *creates] + [
        n for n in OPERATIONS if n in CAPABILITIES[role]
    ]
    assert list(sections) == expected
    catalog = get_catalog()
    for name, section in sections.items():
        operation = catalog.lookup(name)
        assert operation.title in section.text
        # The description's names are code, not backticks (docs/howto/admin.md).
        first_line = operation.description.splitlines()[0]
        assert first_line.replace("`", "") in section.text
        assert "`" not in section.text.split("Input schema")[0]
        (schema,) = section.find_all("pre")
        assert json.loads(schema.text) == json.loads(
            json.dumps(operation.input_schema, default=str)
        )


def test_catalog_page_shows_the_input_schema_of_cancel_with_its_reasons(demo):
    sections = _catalog_sections(parse(login("support").get(CATALOG).content))
    (schema,) = sections["cancel_order"].find_all("pre")
    document = json.loads(schema.text)
    assert document["properties"]["reason"]["enum"] == [
        "customer_request",
        "payment_failure",
        "inventory_failure",
    ]
    assert "reason" in document["required"]


def test_catalog_page_shows_the_transitions_as_a_table_without_graphviz(demo, monkeypatch):
    monkeypatch.setattr("affordances.admin.diagrams.shutil.which", lambda name: None)
    page = parse(login("admin").get(CATALOG).content)
    (diagram,) = page.with_class("state-diagram")
    assert diagram.find_all("svg") == []
    (table,) = diagram.find_all("table")
    assert [th.text for th in table.find_all("th")] == ["From", "Operation", "To"]
    rows = [tuple(td.text for td in tr.find_all("td")) for tr in table.find_all("tr")]
    assert [row for row in rows if row] == [
        ("pending", "Confirm order", "confirmed"),
        ("confirmed", "Ship order", "shipped"),
        ("shipped", "Mark order delivered", "delivered"),
        ("pending", "Cancel order", "cancelled"),
        ("confirmed", "Cancel order", "cancelled"),
        ("delivered", "Refund order", "refunded"),
    ]


def test_catalog_page_draws_an_svg_when_graphviz_is_installed(demo):
    pytest.importorskip("graphviz")
    import shutil

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    page = parse(login("admin").get(CATALOG).content)
    (diagram,) = page.with_class("state-diagram")
    assert diagram.find_all("svg")


@pytest.mark.parametrize("role", ["support", "warehouse", "auditor"])
def test_catalog_page_never_mentions_operations_the_user_lacks(demo, role):
    # docs/protocol.md#affordances: an operation the caller lacks the capability for appears
    # "nowhere else";
    # docs/howto/admin.md: "Operations the user lacks the capability for appear nowhere."
    html = login(role).get(CATALOG).content.decode()
    assert no_trace_of(html, ALL - CAPABILITIES[role]) == []


def test_catalog_page_is_linked_from_the_change_page(demo):
    page = parse(login("auditor").get(change_url(demo.orders["demo-01"])).content)
    assert CATALOG in [a.attrs.get("href") for a in page.find_all("a")]


@pytest.mark.parametrize("viewer", ["auditor", "warehouse"])
def test_history_hides_which_operation_ran_from_users_who_may_not_know_it(api, demo, viewer):
    order = demo.orders["demo-01"]
    response = api("support").post(
        f"/api/orders/{order.pk}/cancel/", {"reason": "inventory_failure"}, format="json"
    )
    assert response.status_code == 200
    client = Client()
    assert client.login(username=viewer, password=DEMO_PASSWORD)
    html = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    history = html[html.index('id="affordances-history"') :]
    assert "Pending → Cancelled" in history  # the object's own history stays visible
    assert "cancel_order" not in html
    assert "Cancel order" not in html
    assert "inventory_failure" not in html
    assert "Inventory failure" not in html
