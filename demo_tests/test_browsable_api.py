"""The browsable API shows an order's affordances as forms that go through execution."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from demo_tests.conftest import DEMO_PASSWORD, Demo


@pytest.fixture
def browser(demo) -> Client:
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="support", password=DEMO_PASSWORD)
    return client


def _forms(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-operation="(\w+)"(.*?)</form>', html, flags=re.S))


def test_order_page_has_one_form_per_affordance_with_narrowed_choices(browser, demo):
    order = demo.orders["demo-01"]  # pending, authorized: support may confirm and cancel
    response = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    forms = _forms(response.content.decode())
    assert set(forms) == {"confirm_order", "cancel_order"}
    options = re.findall(r'<option value="(\w+)"', forms["cancel_order"])
    assert options == ["customer_request", "inventory_failure"]  # no payment_failure
    assert 'name="expectedVersion" value="1"' in forms["cancel_order"]


def test_unavailable_and_hidden_operations_get_no_form(browser, demo):
    order = demo.orders["demo-03"]  # payment pending: confirm unavailable for support
    html = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    assert set(_forms(html)) == {"cancel_order"}
    assert "ship_order" not in _forms(html)


def test_submitting_a_form_runs_the_operation(browser, demo):
    order = demo.orders["demo-01"]
    page = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = browser.post(
        f"/api/orders/{order.pk}/cancel/",
        {"csrfmiddlewaretoken": token, "expectedVersion": "1", "reason": "customer_request"},
        HTTP_ACCEPT="text/html",
    )
    assert response.status_code == 200
    cancelled = demo.order("demo-01")
    assert (cancelled.status, cancelled.version) == ("cancelled", 2)


def test_a_stale_form_changes_nothing(browser, demo):
    order = demo.orders["demo-01"]
    page = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    response = browser.post(
        f"/api/orders/{order.pk}/confirm/",
        {"csrfmiddlewaretoken": token, "expectedVersion": "7"},
        HTTP_ACCEPT="text/html",
    )
    assert response.status_code == 412
    assert demo.order("demo-01").status == "pending"


def _unavailable(html: str) -> dict[str, str]:
    panel = re.search(r'<ul class="affordances-unavailable">(.*?)</ul>', html, flags=re.S)
    if panel is None:
        return {}
    return dict(re.findall(r'data-operation="(\w+)" data-reason="(\w+)"', panel[1]))


@pytest.mark.parametrize(
    ("username", "key"),
    [
        ("support", "demo-03"),
        ("support", "demo-01"),
        ("alice", "demo-03"),
        ("warehouse", "demo-03"),
    ],
)
def test_the_action_panel_lists_what_the_json_says_does_not_apply_and_why(demo, username, key):
    client = Client()
    assert client.login(username=username, password=DEMO_PASSWORD)
    path = f"/api/orders/{demo.orders[key].pk}/"
    entries = client.get(path, HTTP_ACCEPT="application/json").json()["unavailableAffordances"]
    html = client.get(path, HTTP_ACCEPT="text/html").content.decode()
    # The same list as the JSON's, never more: what the caller has no capability for
    # appears nowhere on the page.
    assert _unavailable(html) == {entry["name"]: entry["reason"] for entry in entries}
    mentioned = {entry["name"] for entry in entries} | set(_forms(html))
    for hidden in {"confirm_order", "ship_order", "refund_order"} - mentioned:
        assert hidden not in html


def test_the_reasons_are_shown_with_the_operations_titles(browser: Client, demo: Demo) -> None:
    order = demo.orders["demo-03"]  # payment pending: support may not confirm it
    html = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    assert _unavailable(html) == {"confirm_order": "payment_not_authorized"}
    assert "<strong>Confirm order</strong>: payment not authorized</li>" in html
    plain = browser.get(f"/api/orders/{order.pk}/?affordances=none", HTTP_ACCEPT="text/html")
    assert _unavailable(plain.content.decode()) == {}


def test_a_runs_page_is_titled_by_its_operation(browser: Client, demo: Demo) -> None:
    order = demo.orders["demo-01"]
    page = browser.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    response = browser.post(
        f"/api/orders/{order.pk}/cancel/",
        {"csrfmiddlewaretoken": token[1], "expectedVersion": "1", "reason": "customer_request"},
        HTTP_ACCEPT="text/html",
    )
    html = response.content.decode()
    assert "<title>Cancel order \u2013 Django REST framework</title>" in html  # en dash
    assert "<h1>Cancel order</h1>" in html
    assert "Transition" not in html


def test_every_form_control_has_a_label_that_names_it(browser: Client, demo: Demo) -> None:
    order = demo.orders["demo-01"]  # two forms (confirm, cancel) and DRF's own
    for path in (f"/api/orders/{order.pk}/", "/api/orders/"):
        html = browser.get(path, HTTP_ACCEPT="text/html").content.decode()
        labelled = re.findall(r'<label for="([^"]+)"', html)
        ids = re.findall(r'\sid="([^"]+)"', html)
        assert len(ids) == len(set(ids)), "duplicate ids"
        assert set(labelled) <= set(ids)
        controls = re.findall(r"<(?:select|textarea|input)\b([^>]*)>", html)
        for attributes in controls:
            if re.search(r'type="(hidden|submit)"', attributes):
                continue
            control = re.search(r'\sid="([^"]+)"', attributes)
            assert control is not None and control[1] in labelled, attributes
    assert '<html lang="en' in html


def test_the_catalog_page_reads_titles_and_descriptions_first(browser: Client, demo: Demo) -> None:
    operations = browser.get("/api/operations/", HTTP_ACCEPT="application/json").json()[
        "operations"
    ]
    html = browser.get("/api/operations/", HTTP_ACCEPT="text/html").content.decode()
    listed = html.index('<div class="affordances-catalog">')
    folded = html.index('<details class="affordances-catalog-json">')
    assert listed < folded < html.index('<div class="response-info"')
    titles = re.findall(
        r'<article [^>]*data-operation="(\w+)">\s*<h3 class="h4">([^<]+)</h3>', html
    )
    resources = list(dict.fromkeys(entry["resource"] for entry in operations))
    assert titles == [
        (entry["name"], entry["title"])
        for resource in resources  # grouped by resource, in the catalog's order
        for entry in operations
        if entry["resource"] == resource
    ]
    # The page's own description is for people, not a path in the repository.
    head = html[: html.index("<h1>")] + html[html.index("<h1>") : listed]
    assert "<h1>Operation catalog</h1>" in head
    assert "docs/protocol.md" not in head
    # Descriptions as paragraphs, their `code` as <code>.
    assert "<code>pending</code>" in html
