"""The real admin in headless Chromium: support cancels an unpaid order, then meets a stale page.

Needs Playwright's Python package and Debian's ``chromium`` (``/usr/bin/chromium``); the
module skips cleanly without them. Screenshots of every step go to ``out/screenshots/``
at the repository root (git-ignored).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from django.contrib.auth import get_user_model
from django.db import connections
from playwright.sync_api import Page, expect, sync_playwright

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import AuditRecord
from demo_tests.axe import AXE, violations
from orders.models import Order
from orders.services import seed_demo

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "out" / "screenshots"
PASSWORD = "browser-test-password"

if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

# transaction=True: the live server's thread must see the seeded rows. serialized_rollback:
# the flush afterwards would also drop the groups the migrations created; restore them.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _order(key: str) -> Order:
    return Order.objects.get(description=f"Demo order {key}")


@pytest.fixture
def browser_page(live_server, monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls
    # are plain synchronous code all the same (Django's documented escape hatch).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.set_default_timeout(15_000)
            yield page
            context.close()
        finally:
            browser.close()
            # ORM calls made while Playwright's loop runs get their own connection
            # (Django's connections are context-local); close it, or PostgreSQL cannot
            # drop the test database at the end of the session.
            connections.close_all()


def _shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    _shot(page, "01-login")
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(username)
    _shot(page, "02-logged-in")


def test_support_cancels_an_unpaid_order_and_a_stale_page_is_refused(live_server, browser_page):
    seed_demo(password=PASSWORD)
    page, base = browser_page, live_server.url
    unpaid, other = _order("demo-03"), _order("demo-01")

    _log_in(page, base, "support")

    # The change page of a pending, unpaid order: cancel offered, confirm explained.
    page.goto(f"{base}/admin/orders/order/{unpaid.pk}/change/")
    cancel = page.locator(".affordance-button[data-operation=cancel_order]")
    expect(cancel).to_be_visible()
    expect(cancel).to_have_text("Cancel order")
    confirm = page.locator("#affordances-panel li[data-operation=confirm_order]")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("payment not authorized (payment_not_authorized)")
    expect(page.locator(".affordance-button[data-operation=confirm_order]")).to_have_count(0)
    _shot(page, "03-change-page-pending-unpaid")

    # The argument form: only the reasons allowed for this order and user, none chosen.
    cancel.click()
    form_url = f"**/admin/orders/order/{unpaid.pk}/operation/cancel_order/"
    page.wait_for_url(form_url)
    reason = page.locator("select[name=reason]")
    expect(reason).to_be_visible()
    options = reason.locator("option").evaluate_all("options => options.map(o => o.value)")
    assert options == ["", "customer_request", "inventory_failure"]
    expect(reason).to_have_value("")
    assert reason.evaluate("select => select.required") is True
    submit = page.locator("form[data-operation=cancel_order] input[type=submit]")

    # An untouched form runs nothing: the browser keeps it (the reason is required).
    submit.click()
    page.wait_for_timeout(300)
    assert page.url.endswith(f"/admin/orders/order/{unpaid.pk}/operation/cancel_order/")
    assert reason.evaluate("select => select.validity.valueMissing") is True
    assert not AuditRecord.objects.filter(object_id=str(unpaid.pk)).exists()

    reason.select_option("inventory_failure")
    page.fill("textarea[name=note]", "Out of stock")
    _shot(page, "04-cancel-form")
    submit.click()

    # Cancelling asks first: the consequence and the change, nothing run yet.
    confirmation = page.locator(".affordance-confirmation[data-operation=cancel_order]")
    expect(confirmation).to_be_visible()
    expect(confirmation.locator(".affordance-consequence")).to_contain_text("will be cancelled")
    expect(confirmation.locator(".affordance-change")).to_contain_text("pending → cancelled")
    _shot(page, "04b-cancel-confirmation")
    assert Order.objects.get(pk=unpaid.pk).status == "pending"

    # "No, take me back" runs nothing.
    confirmation.locator("a.cancel-link").click()
    page.wait_for_url(f"**/admin/orders/order/{unpaid.pk}/change/")
    kept = Order.objects.get(pk=unpaid.pk)
    assert (kept.status, kept.version) == ("pending", 1)
    assert not AuditRecord.objects.filter(object_id=str(unpaid.pk)).exists()

    # Again, and "Yes, I'm sure".
    page.locator(".affordance-button[data-operation=cancel_order]").click()
    page.wait_for_url(form_url)
    page.locator("select[name=reason]").select_option("inventory_failure")
    page.fill("textarea[name=note]", "Out of stock")
    page.locator("form[data-operation=cancel_order] input[type=submit]").click()
    expect(confirmation).to_be_visible()
    confirmation.locator("input[type=submit]").click()

    # Success: the message, the new state, the history entry.
    page.wait_for_url(f"**/admin/orders/order/{unpaid.pk}/change/")
    expect(page.locator(".messagelist .success")).to_contain_text(
        "Cancel order: done. The order is now cancelled (version 2)."
    )
    expect(page.locator(".field-status .readonly")).to_have_text("Cancelled")
    row = page.locator("#affordances-history tr.audit-record").first
    expect(row).to_contain_text("Cancel order")
    expect(row).to_contain_text("Pending → Cancelled")
    expect(row.locator("dl dd").first).to_have_text("Inventory failure")
    expect(row).to_contain_text("Admin")
    _shot(page, "05-cancelled-with-history")
    cancelled = Order.objects.get(pk=unpaid.pk)
    assert (cancelled.status, cancelled.version) == ("cancelled", 2)

    # A stale page: the form is open while someone else confirms the order.
    page.goto(f"{base}/admin/orders/order/{other.pk}/change/")
    page.locator(".affordance-button[data-operation=cancel_order]").click()
    page.wait_for_url(f"**/admin/orders/order/{other.pk}/operation/cancel_order/")
    expect(page.locator("input[name=expectedVersion]")).to_have_value("1")
    page.locator("select[name=reason]").select_option("customer_request")
    _shot(page, "06-stale-form-open")
    perform(
        operation=get_catalog().lookup("confirm_order"),
        pk=other.pk,
        user=get_user_model().objects.get(username="supervisor"),
        arguments={},
        via="api",
        represent=lambda instance: {"id": instance.pk},
    )
    records = AuditRecord.objects.filter(object_id=str(other.pk)).count()
    page.click("form[data-operation=cancel_order] input[type=submit]")

    page.wait_for_url(f"**/admin/orders/order/{other.pk}/change/")
    error = page.locator(".messagelist .error")
    expect(error).to_contain_text("This order changed since you opened it")
    expect(error).to_contain_text("It is now confirmed (version 2)")
    expect(page.locator(".field-status .readonly")).to_have_text("Confirmed")
    _shot(page, "07-stale-refused")
    unchanged = Order.objects.get(pk=other.pk)
    assert (unchanged.status, unchanged.version) == ("confirmed", 2)
    assert AuditRecord.objects.filter(object_id=str(other.pk)).count() == records == 1


# --- accessibility: axe-core over every page the app adds to the admin ----------------------

# What axe-core reports that is Django's, not the app's: (rule, selector prefix), each
# with why. Anything else serious or critical fails the test.
DJANGO_OWN = {
    # The breadcrumb trail: Django's base.css tells its links from the text by colour
    # alone (white on #c4dce8 over --primary: 1.42:1 light, 1.07:1 dark). Django's own
    # change form and change list have the same finding; the app's pages write the trail
    # in Django's markup so that it looks and reads the same on every admin page.
    ("link-in-text-block", ".breadcrumbs > a"),
}


def _axe(page: Page) -> list[dict[str, object]]:
    return violations(page, DJANGO_OWN)


def test_every_page_the_app_adds_has_no_serious_accessibility_finding(live_server, browser_page):
    if not AXE.exists():
        pytest.skip(f"{AXE} is not installed (npm ci in clients/)")
    seed_demo(password=PASSWORD)
    page, base = browser_page, live_server.url
    pending, delivered = _order("demo-01"), _order("demo-07")
    _log_in(page, base, "admin")
    pages = {
        "catalog": f"{base}/admin/orders/order/catalog/",
        "change form panel and history": f"{base}/admin/orders/order/{delivered.pk}/change/",
        "change form, unavailable reasons": f"{base}/admin/orders/order/{pending.pk}/change/",
        "operation form": f"{base}/admin/orders/order/{pending.pk}/operation/cancel_order/",
        "create form": f"{base}/admin/orders/order/add/",
        "changelist column and actions": f"{base}/admin/orders/order/",
    }
    found: dict[str, list[dict[str, object]]] = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        for name, url in pages.items():
            page.goto(url)
            found[f"{name} ({scheme})"] = _axe(page)
        # The bulk form: reached from the changelist's action menu, as a person does.
        page.goto(pages["changelist column and actions"])
        page.check(f"input[name=_selected_action][value='{pending.pk}']")
        page.select_option("select[name=action]", "operation_cancel_order")
        page.click("button[name=index]")
        expect(page.locator("#content-main")).to_contain_text("Cancel order on:")
        found[f"bulk operation form ({scheme})"] = _axe(page)
        _shot(page, f"08-bulk-form-{scheme}")
        # Its confirmation: each selected object's preview (or refusal) before anything runs.
        page.locator("select[name=reason]").select_option("customer_request")
        page.locator("#content-main input[type=submit]").first.click()
        expect(page.locator(".affordance-bulk-preview")).to_be_visible()
        found[f"bulk confirmation ({scheme})"] = _axe(page)
        _shot(page, f"09-bulk-confirmation-{scheme}")
        # One object's confirmation page, reached from its operation form.
        page.goto(pages["operation form"])
        page.locator("select[name=reason]").select_option("customer_request")
        page.locator("form[data-operation=cancel_order] input[type=submit]").click()
        expect(page.locator(".affordance-consequence")).to_be_visible()
        found[f"confirmation page ({scheme})"] = _axe(page)
        _shot(page, f"10-confirmation-{scheme}")
    assert Order.objects.get(pk=pending.pk).status == "pending"  # nothing was confirmed

    failing = {name: nodes for name, nodes in found.items() if nodes}
    assert failing == {}, json.dumps(failing, indent=1)
