"""The demo's front door in headless Chromium: a person without a session meets a page
with a login link, logs in and lands back where they started; the app's own pages
(the login page, the entry point, the API's documentation, an object's browsable page
and the catalog) have no serious or critical axe-core finding.

Needs Playwright's Python package, Debian's ``chromium`` (``/usr/bin/chromium``) and
axe-core (``npm ci`` in ``clients/``); the module skips cleanly without them. One
browser for all the pages.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("playwright")

from django.db import connections
from playwright.sync_api import Page, expect, sync_playwright

from demo_tests.axe import AXE
from demo_tests.axe import violations as _axe
from demo_tests.conftest import DEMO_PASSWORD, Demo

CHROMIUM = "/usr/bin/chromium"

if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

# transaction=True: the live server's thread must see the seeded rows. serialized_rollback:
# the flush afterwards would also drop the groups the migrations created; restore them.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def page(live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Page]:
    # As in test_admin_browser.py: the test's ORM calls run beside Playwright's loop.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            opened = context.new_page()
            opened.set_default_timeout(15_000)
            yield opened
            context.close()
        finally:
            browser.close()
            connections.close_all()


def _log_in(page: Page) -> None:
    page.fill("#id_username", "support")
    page.fill("#id_password", DEMO_PASSWORD)
    page.click("#submit-id-submit")


def test_a_person_logs_in_at_the_front_door_and_every_page_is_accessible(
    live_server: Any, page: Page, demo: Demo
) -> None:
    if not AXE.exists():
        pytest.skip(f"{AXE} is not installed (npm ci in clients/)")
    base = live_server.url
    found: dict[str, list[dict[str, object]]] = {}

    # The documentation, before logging in: it says it needs a login, with the link.
    page.goto(f"{base}/api/docs/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Log in to use this API")
    found["documentation, anonymous"] = _axe(page)

    # The front door: "/" is the entry point, which asks a browser to log in.
    response = page.goto(f"{base}/")
    assert response is not None and response.status == 401
    assert page.url == f"{base}/api/"
    found["front door"] = _axe(page)
    page.get_by_role("main").get_by_role("link", name="Log in").click()
    page.wait_for_url("**/api-auth/login/?next=/api/")
    found["login"] = _axe(page)
    _log_in(page)
    page.wait_for_url(f"{base}/api/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    found["entry point"] = _axe(page)

    # Back where it started: the documentation now loads its document.
    page.goto(f"{base}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("django-affordances")
    found["documentation"] = _axe(page)

    # An object's page: the operations that apply, and the one that does not, with why.
    order = demo.order("demo-03")  # payment pending: support may cancel, not confirm
    page.goto(f"{base}/api/orders/{order.pk}/")
    unavailable = page.locator(".affordances-unavailable")
    expect(unavailable).to_contain_text("Confirm order")
    expect(unavailable).to_contain_text("payment not authorized")
    found["object"] = _axe(page)

    page.goto(f"{base}/api/operations/")
    expect(page.locator(".affordances-catalog")).to_contain_text("Cancel order")
    found["catalog"] = _axe(page)

    failing = {name: nodes for name, nodes in found.items() if nodes}
    assert failing == {}, json.dumps(failing, indent=1)
