"""The library's tests: ``tests.settings`` (Django, DRF, django-fsm, the affordances app
and the test models of ``tests/generic``), with the demo unimportable under ``make test``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shop_data import shop, shop_api, shop_registered  # noqa: F401 (the shop's fixtures)
from tests.xdist_scheduling import pytest_xdist_make_scheduler  # noqa: F401 (-n: the units)

# The longest modules first (a new project in a virtualenv each): pytest-xdist hands
# tests out in collection order, and a long one collected last would run alone.
LONGEST_FIRST = (
    "tests/test_adoption_existing.py",
    "tests/test_adoption.py",
    "tests/test_adoption_claims.py",
    "tests/test_docs_fresh.py",
    "tests/test_installation.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: each module keeps its own order


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What a test recorded as ``timing`` (record_property), printed at the end of the
    run: with -n its own output is not shown, and CI's log should carry these numbers."""
    timings = [
        value
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "call"
        for key, value in getattr(report, "user_properties", ())
        if key == "timing"
    ]
    if timings:
        terminalreporter.write_sep("-", "timings")
        for timing in timings:
            terminalreporter.write_line(str(timing))


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session")
def adoption_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, built once per session for the adoption tests."""
    from tests.adoption_support import session_wheel

    return session_wheel(tmp_path_factory)
