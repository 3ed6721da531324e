"""The admin's change notice (affordances.admin.live, docs/howto/admin.md#the-change-notice):
an open change page or operation form says "This order changed since you opened it —
reload" within a second of another user's run, on any face.

The endpoint with Django's test client; the notice in headless Chromium (Playwright and
Debian's ``/usr/bin/chromium``; those tests skip cleanly without them), with a run
through ``perform()`` and one through the REST API.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connections
from django.test import Client

from affordances.catalog import get_catalog
from affordances.execution import perform
from demo_tests.conftest import DEMO_PASSWORD, Demo
from orders.models import Order

CHROMIUM = "/usr/bin/chromium"
NOTICE = "#affordances-changed .messagelist li.warning"


def _client(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client


def _version_url(order: Order) -> str:
    return f"/admin/orders/order/{order.pk}/version/"


def _confirm(order: Order, username: str = "supervisor") -> None:
    """Another user's run, through the execution path as every face's is."""
    perform(
        operation=get_catalog().lookup("confirm_order"),
        pk=order.pk,
        user=get_user_model().objects.get(username=username),
        arguments={},
        via="api",
        represent=lambda instance: {"id": instance.pk},
    )


# --- the endpoint ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_version_endpoint_answers_the_current_version_uncached(demo: Demo) -> None:
    order = demo.order("demo-01")
    support = _client("support")

    response = support.get(_version_url(order))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    assert response.json() == {"version": 1}

    _confirm(order)
    assert support.get(_version_url(order)).json() == {"version": 2}
    assert support.head(_version_url(order)).status_code == 200
    assert support.post(_version_url(order)).status_code == 405


@pytest.mark.django_db
def test_the_version_endpoint_is_staff_only_and_reads_what_the_user_may_see(demo: Demo) -> None:
    alice, bob = demo.users["alice"], demo.users["bob"]
    hers, his = demo.order("demo-01"), demo.order("demo-10")
    assert hers.customer_id == alice.pk and his.customer_id == bob.pk

    # Not staff, or not logged in: a 404, never the admin's login page or a version.
    assert _client("alice").get(_version_url(hers)).status_code == 404
    assert Client().get(_version_url(hers)).status_code == 404

    # Staff who may change orders but not view all of them (orders.selectors: a
    # "customer" sees only their own): another's order is hidden, a 404 like a missing one.
    alice.is_staff = True
    alice.save()
    alice.user_permissions.add(Permission.objects.get(codename="change_order"))
    staff_alice = _client("alice")
    assert staff_alice.get(_version_url(hers)).json() == {"version": 1}
    hidden = staff_alice.get(_version_url(his))
    missing = staff_alice.get(f"/admin/orders/order/{Order.objects.latest('pk').pk + 1}/version/")
    malformed = staff_alice.get("/admin/orders/order/not-a-key/version/")
    assert hidden.status_code == missing.status_code == malformed.status_code == 404
    assert b"version" not in hidden.content

    # Staff without the model's view or change permission: 404 too.
    alice.user_permissions.clear()
    assert _client("alice").get(_version_url(hers)).status_code == 404


@pytest.mark.django_db
def test_the_pages_carry_the_version_they_were_rendered_for(demo: Demo) -> None:
    order = demo.order("demo-01")
    support = _client("support")
    pages = {
        "change": f"/admin/orders/order/{order.pk}/change/",
        "form": f"/admin/orders/order/{order.pk}/operation/cancel_order/",
    }
    for name, url in pages.items():
        html = support.get(url).content.decode()
        assert f'data-version-url="{_version_url(order)}"' in html, name
        assert 'data-version="1"' in html, name
        assert 'role="status"' in html, name
        assert "affordances/admin/changed.js" in html, name
        assert ("this form would be refused" in html) is (name == "form")
        assert "<script>" not in html.split('id="affordances-changed"')[1].split("</template>")[0]
    # The confirmation page (cancel asks first) too, and reloading it opens the form afresh.
    confirmation = support.post(pages["form"], {"reason": "customer_request", "expectedVersion": 1})
    html = confirmation.content.decode()
    assert "affordance-consequence" in html
    assert 'data-version="1"' in html and "this form would be refused" in html
    assert f'<a href="{pages["form"]}">reload</a>' in html
    # The create form has no object to hear about.
    assert "affordances-changed" not in support.get("/admin/orders/order/add/").content.decode()


# --- in Chromium ----------------------------------------------------------------------------


@pytest.fixture
def browser(live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    pytest.importorskip("playwright")
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    # As in test_admin_browser.py: the test's ORM calls run beside Playwright's loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield chromium
        finally:
            chromium.close()
            connections.close_all()


def _logged_in(browser: Any, base: str, username: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#user-tools")
    return context


@dataclass
class Tab:
    """An open admin page and the times it asked for the version."""

    page: Any
    polls: list[float] = field(default_factory=list)


def _open(context: Any, base: str, order: Order) -> dict[str, Tab]:
    """The order's change page and its cancel form, each in its own tab."""
    tabs = {}
    for name, path in (("change", "change/"), ("form", "operation/cancel_order/")):
        tab = Tab(context.new_page())
        tab.page.set_default_timeout(15_000)
        tab.page.on(
            "request",
            lambda request, tab=tab: (
                tab.polls.append(time.monotonic()) if "/version/" in request.url else None
            ),
        )
        tab.page.goto(f"{base}/admin/orders/order/{order.pk}/{path}")
        assert tab.page.url.endswith(path)  # not sent back: cancel is available
        assert tab.page.evaluate("() => document.visibilityState") == "visible"
        tabs[name] = tab
    return tabs


def _quiet(tabs: dict[str, Tab]) -> None:
    """Nothing changed: ~2 s of polling, and no notice."""
    for tab in tabs.values():
        tab.polls.clear()
    tabs["change"].page.wait_for_timeout(2_000)
    for name, tab in tabs.items():
        assert len(tab.polls) >= 2, (name, tab.polls)  # it does ask
        assert tab.page.locator("#affordances-changed").inner_html() == "", name


def _heard(tabs: dict[str, Tab], ran_at: float) -> None:
    """The notice on each page within 1.5 s of the run, without a reload; then no more polls."""
    for name, tab in tabs.items():
        notice = tab.page.locator(NOTICE)
        left = int((ran_at + 1.5 - time.monotonic()) * 1000)
        notice.wait_for(state="visible", timeout=max(1, left))
        assert time.monotonic() - ran_at <= 1.5, name
        text = notice.inner_text()
        assert "This order changed since you opened it — reload" in text, (name, text)
        assert ("this form would be refused" in text) is (name == "form"), text
        assert tab.page.locator("#affordances-changed").get_attribute("role") == "status"
    stopped = {name: len(tab.polls) for name, tab in tabs.items()}
    tabs["change"].page.wait_for_timeout(1_500)
    assert {name: len(tab.polls) for name, tab in tabs.items()} == stopped


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_run_through_perform_is_heard_by_the_open_pages(
    live_server: Any, browser: Any, demo: Demo
) -> None:
    order = demo.order("demo-01")
    context = _logged_in(browser, live_server.url, "support")
    tabs = _open(context, live_server.url, order)
    _quiet(tabs)

    _confirm(order)
    _heard(tabs, time.monotonic())

    # The form still submits (the person may read it first); the execution path refuses.
    form = tabs["form"].page
    form.locator("select[name=reason]").select_option("customer_request")
    form.locator("form[data-operation=cancel_order] input[type=submit]").click()
    form.wait_for_url(f"**/admin/orders/order/{order.pk}/change/")
    assert (
        "This order changed since you opened it" in form.locator(".messagelist .error").inner_text()
    )
    assert Order.objects.get(pk=order.pk).status == "confirmed"

    # "reload": the page as it is now, nothing to tell.
    change = tabs["change"].page
    change.locator(f"{NOTICE} a").click()
    change.wait_for_load_state()
    assert change.locator(".field-status .readonly").inner_text() == "Confirmed"
    change.wait_for_timeout(1_000)
    assert change.locator("#affordances-changed").inner_html() == ""
    context.close()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_rest_run_is_heard_and_the_notice_is_accessible(
    live_server: Any, browser: Any, demo: Demo
) -> None:
    from demo_tests.test_admin_browser import AXE, _axe

    order = demo.order("demo-01")
    context = _logged_in(browser, live_server.url, "support")
    tabs = _open(context, live_server.url, order)
    _quiet(tabs)

    def post(path: str, body: dict[str, Any], token: str = "") -> dict[str, Any]:
        request = urllib.request.Request(
            f"{live_server.url}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"}
            | ({"Authorization": f"Bearer {token}"} if token else {}),
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    token = post("/api/token/", {"username": "supervisor", "password": DEMO_PASSWORD})["access"]
    assert post(f"/api/orders/{order.pk}/confirm/", {}, token)["status"] == "confirmed"
    _heard(tabs, time.monotonic())

    if AXE.exists():
        for name, tab in tabs.items():
            page = tab.page
            page.bring_to_front()  # a tab behind the other runs no colour transition
            for scheme in ("light", "dark"):
                page.emulate_media(color_scheme=scheme)
                page.wait_for_timeout(500)  # the admin's colour transitions (0.15 s) end
                assert page.locator(NOTICE).is_visible()
                assert _axe(page) == [], (name, scheme)
    context.close()
