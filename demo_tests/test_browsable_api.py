"""The browsable API shows an order's affordances as forms that go through execution."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from demo_tests.conftest import DEMO_PASSWORD


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
