"""The admin's layout in headless Chromium at 1280 and 390 px (issue 55): the Actions
panel's buttons never overlap, the change list's "Available operations" column is not
clipped, and an invalid submit shows Django's error note.

Needs Playwright's Python package and Debian's ``chromium`` (``/usr/bin/chromium``); the
module skips cleanly without them. The live server is started as in test_admin_browser.py.
"""

from __future__ import annotations

import shutil
from itertools import combinations

import pytest

pytest.importorskip("playwright")

from django.db import connections
from playwright.sync_api import Page, expect, sync_playwright

from orders.models import Order
from orders.services import seed_demo
from procurement.demo import seed_procurement, seed_procurement_users
from procurement.models import PurchaseRequest

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "layout-test-password"

if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

# transaction=True: the live server's thread must see the seeded rows; serialized_rollback
# restores the groups the migrations created after the flush.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


@pytest.fixture
def browser(live_server, monkeypatch):
    # Playwright's sync API runs an event loop in this thread; the ORM calls here are
    # plain synchronous code all the same (Django's documented escape hatch).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
        )
        try:
            yield chromium
        finally:
            chromium.close()
            connections.close_all()


def _page(browser, base: str, width: int) -> Page:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.set_default_timeout(15_000)
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_be_visible()
    return page


def _overlapping(boxes: list[dict[str, float]]) -> list[tuple[int, int]]:
    """The pairs of boxes that share any area (touching edges do not count)."""
    return [
        (i, j)
        for (i, a), (j, b) in combinations(enumerate(boxes), 2)
        if a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    ]


def _boxes(page: Page, selector: str) -> list[dict[str, float]]:
    boxes = [
        page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())
    ]
    assert all(box is not None and box["width"] > 0 for box in boxes), boxes
    return [box for box in boxes if box is not None]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_admin_lays_out_at_desktop_and_phone_width(live_server, browser, width):
    seed_demo(password=PASSWORD)
    seed_procurement_users(password=PASSWORD)
    seed_procurement()
    base = live_server.url
    page = _page(browser, base, width)
    submitted = PurchaseRequest.objects.filter(status="submitted").order_by("pk").first()
    assert submitted is not None

    # The Actions panel of a submitted request: Approve, Reject, Request changes side by
    # side or wrapped, never on top of each other.
    page.goto(f"{base}/admin/procurement/purchaserequest/{submitted.pk}/change/")
    buttons = "#affordances-panel .affordance-button"
    titles = page.locator(buttons).evaluate_all(
        "nodes => nodes.map(n => n.value || n.textContent.trim())"
    )
    assert {"Approve request", "Request changes"} <= set(titles)
    assert _overlapping(_boxes(page, buttons)) == []
    # Django's object-tools (History, Operations) above the panel, not inside it.
    tools = page.locator("#content-main > ul.object-tools")
    expect(tools).to_be_visible()
    assert page.locator("#affordances-panel .object-tools").count() == 0
    tools_box, panel_box = tools.bounding_box(), page.locator("#affordances-panel").bounding_box()
    assert tools_box is not None and panel_box is not None
    assert tools_box["y"] + tools_box["height"] <= panel_box["y"] + 1
    # The history's heading sits below the form's buttons, not behind them.
    rows = page.locator("#content-main .submit-row").bounding_box()
    heading = page.locator("#affordances-history h2").bounding_box()
    assert rows is not None and heading is not None
    assert heading["y"] >= rows["y"] + rows["height"]

    # The change lists: the "Available operations" column fully in sight, however wide
    # the project's own columns make the list (the procurement list scrolls sideways at
    # 1280 px; a phone scrolls every change list by design).
    if width == 1280:
        for changelist in ("orders/order", "procurement/purchaserequest"):
            page.goto(f"{base}/admin/{changelist}/")
            expect(page.locator("#result_list th.column-available_operations")).to_be_visible()
            sight = page.evaluate(
                """() => {
                    const results = document.querySelector('#changelist .results');
                    const outer = results.getBoundingClientRect();
                    const cells = document.querySelectorAll(
                        '#result_list .column-available_operations, '
                        + '#result_list .field-available_operations');
                    return {left: outer.left, right: outer.right, cells: [...cells].map(cell => {
                        const box = cell.getBoundingClientRect();
                        return {left: box.left, right: box.right,
                                scroll: cell.scrollWidth, client: cell.clientWidth};
                    })};
                }"""
            )
            assert len(sight["cells"]) > 1, sight
            for cell in sight["cells"]:
                assert sight["left"] - 0.5 <= cell["left"], (changelist, sight)
                assert cell["right"] <= sight["right"] + 0.5, (changelist, sight)
                assert cell["scroll"] <= cell["client"], (changelist, cell)

    # An invalid submit: Django's error note, the error beside its input, the buttons
    # of the submit row apart.
    confirmed = Order.objects.get(description="Demo order demo-05")
    page.goto(f"{base}/admin/orders/order/{confirmed.pk}/operation/ship_order/")
    page.fill("input[name=trackingNumber]", "not-valid-1")
    page.locator("form[data-operation=ship_order] .submit-row input[type=submit]").click()
    note = page.locator("form[data-operation=ship_order] p.errornote")
    expect(note).to_have_text("Please correct the error below.")
    expect(page.locator(".form-row.errors.field-trackingNumber .errorlist")).to_be_visible()
    assert _overlapping(_boxes(page, "form[data-operation=ship_order] .submit-row > *")) == []
    assert Order.objects.get(pk=confirmed.pk).status == "confirmed"
    page.close()
