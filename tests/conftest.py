"""The library's tests: ``tests.settings`` (Django, DRF, django-fsm, the affordances app
and the test models of ``tests/generic``), with the demo unimportable under ``make test``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session")
def adoption_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, built once per session for the adoption tests."""
    from tests.adoption_support import session_wheel

    return session_wheel(tmp_path_factory)
