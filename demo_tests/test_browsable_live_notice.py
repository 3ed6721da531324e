"""The browsable API's change notice (affordances.rest.browsable): an object's page says
"This order changed since you opened it — reload" within a second of another user's run,
with the admin's script (affordances/admin/changed.js) asking the object's version.

The page's markup with Django's test client; the notice in headless Chromium
(Playwright and Debian's ``/usr/bin/chromium``; skipped cleanly without them), with a
run through the REST API by another user while the page stays open.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.test import Client

from demo_tests.conftest import DEMO_PASSWORD, Demo

CHROMIUM = "/usr/bin/chromium"
NOTICE = "#affordances-changed .alert-warning"


def _client(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=DEMO_PASSWORD)
    return client


def _region(page: str) -> dict[str, str]:
    match = re.search(r'<div id="affordances-changed"([^>]*)>', page)
    assert match is not None, "no change notice on the page"
    return {
        name: html.unescape(value) for name, value in re.findall(r'([\w-]+)="([^"]*)"', match[1])
    }


# --- the page ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_objects_page_carries_its_version_and_where_to_ask(demo: Demo) -> None:
    order = demo.order("demo-01")
    support = _client("support")
    page = support.get(f"/api/orders/{order.pk}/?format=api").content.decode()
    region = _region(page)
    assert region["data-version"] == "1"
    assert region["data-every"] == "700"
    assert region["role"] == "status" and region["aria-live"] == "polite"
    # Where the script asks: the object itself, as JSON without affordances (the format
    # override left out: the script asks for JSON).
    assert region["data-version-url"] == f"/api/orders/{order.pk}/?affordances=none"
    assert "affordances/admin/changed.js" in page
    assert f'<a class="alert-link" href="/api/orders/{order.pk}/?format=api">reload</a>' in page
    assert "the forms below would be refused" in page  # support may confirm and cancel

    answer = support.get(region["data-version-url"], HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    assert answer.json()["version"] == 1
    assert "affordances" not in answer.json()

    # A caller with no form on the page (the auditor reads only) is told only that it changed.
    auditor = _client("auditor").get(f"/api/orders/{order.pk}/?format=api").content.decode()
    assert _region(auditor)["data-version"] == "1"
    assert 'data-operation="' not in auditor
    assert "changed since you opened it" in auditor
    assert "would be refused" not in auditor


@pytest.mark.django_db
def test_only_an_objects_page_has_the_notice(demo: Demo) -> None:
    order = demo.order("demo-01")
    support = _client("support")
    # A list, a missing object, and the page a form's POST answers have no object to hear.
    listing = support.get("/api/orders/", HTTP_ACCEPT="text/html").content.decode()
    missing = support.get("/api/orders/999999/", HTTP_ACCEPT="text/html")
    page = support.get(f"/api/orders/{order.pk}/", HTTP_ACCEPT="text/html").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    posted = support.post(
        f"/api/orders/{order.pk}/confirm/",
        {"csrfmiddlewaretoken": token[1], "expectedVersion": "1"},
        HTTP_ACCEPT="text/html",
    )
    assert posted.status_code == 200
    for shown in (listing, missing.content.decode(), posted.content.decode()):
        assert 'id="affordances-changed"' not in shown


# --- in Chromium ------------------------------------------------------------------------------


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


def _post(base: str, path: str, body: dict[str, Any], token: str = "") -> dict[str, Any]:
    request = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {token}"} if token else {}),
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.loads(response.read()))


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_another_users_run_is_heard_by_the_open_page(
    live_server: Any, browser: Any, demo: Demo
) -> None:
    base = live_server.url
    order = demo.order("demo-01")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{base}/api-auth/login/?next=/api/orders/{order.pk}/")
    page.fill("#id_username", "support")
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("#submit-id-submit")
    page.wait_for_url(f"**/api/orders/{order.pk}/")
    assert page.locator("form[data-operation=cancel_order]").count() == 1
    polls: list[float] = []
    page.on(
        "request",
        lambda request: (
            polls.append(time.monotonic()) if "affordances=none" in request.url else None
        ),
    )
    # A mark the page keeps until it is loaded again: the notice must come without a reload.
    page.evaluate("() => { window.affordancesOpened = true; }")

    # Nothing changed: ~2 s of polling, and no notice.
    page.wait_for_timeout(2_000)
    assert len(polls) >= 2, polls
    assert page.locator("#affordances-changed").inner_html() == ""

    # Another user confirms the order through the REST API.
    token = _post(base, "/api/token/", {"username": "supervisor", "password": DEMO_PASSWORD})
    confirmed = _post(base, f"/api/orders/{order.pk}/confirm/", {}, token["access"])
    ran_at = time.monotonic()
    assert confirmed["status"] == "confirmed"

    notice = page.locator(NOTICE)
    notice.wait_for(state="visible", timeout=1_500)
    assert time.monotonic() - ran_at <= 1.5
    assert page.evaluate("() => window.affordancesOpened") is True
    text = notice.inner_text()
    assert "This order changed since you opened it — reload" in text, text
    assert "the forms below would be refused" in text, text
    # Heard once: the page stops asking.
    stopped = len(polls)
    page.wait_for_timeout(1_500)
    assert len(polls) == stopped

    # "reload": the object as it is now, nothing to tell.
    notice.locator("a").click()
    page.wait_for_load_state()
    assert page.evaluate("() => window.affordancesOpened") is None
    assert page.locator("#affordances-changed").get_attribute("data-version") == "2"
    assert page.locator("form[data-operation=confirm_order]").count() == 0
    page.wait_for_timeout(1_000)
    assert page.locator("#affordances-changed").inner_html() == ""
    context.close()
