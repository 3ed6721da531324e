"""axe-core in a Playwright page: the serious and critical findings, node by node (the
browser tests of the admin and of the front door ask the same question)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from playwright.sync_api import Page

# From ``npm ci`` in clients/ (the tests skip, saying so, without it).
AXE = Path(__file__).resolve().parents[1] / "clients" / "node_modules" / "axe-core" / "axe.min.js"


def violations(page: Page, ignored: Iterable[tuple[str, str]] = ()) -> list[dict[str, object]]:
    """axe-core's serious and critical violations on the page, node by node; ``ignored``:
    (rule, selector prefix) pairs that are someone else's (each named with why where it
    is given)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    skipped = tuple(ignored)
    return [
        {
            "rule": violation["id"],
            "impact": node["impact"],
            "target": node["target"],
            "summary": node["failureSummary"],
        }
        for violation in result["violations"]
        for node in violation["nodes"]
        if node["impact"] in ("serious", "critical")
        and not any(
            violation["id"] == rule and str(node["target"][0]).startswith(prefix)
            for rule, prefix in skipped
        )
    ]
