"""One registry of everything the app derives from settings and the URLconf.

The catalog, the memoized documents, the per-state evaluation plan, the MCP servers and
the handler of internal requests are each built once per process from the code, the
settings and the URLconf. Each module registers how to forget what it built
(:func:`derived`), and one rule forgets it all together: whenever a setting changes
(``override_settings`` in tests, or a project changing settings at runtime), every piece
is rebuilt on next use — never a piece rebuilt from another's stale state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver

__all__ = ["derived", "reset"]

_lock = threading.Lock()
_resets: list[Callable[[], None]] = []


def derived(forget: Callable[[], None]) -> Callable[[], None]:
    """Register ``forget`` (which drops something built from settings); returns it, so it
    can decorate the function."""
    with _lock:
        if forget not in _resets:
            _resets.append(forget)
    return forget


def reset() -> None:
    """Forget everything derived from settings and the URLconf, all at once."""
    with _lock:
        resets = list(_resets)
    for forget in resets:
        forget()


@receiver(setting_changed)
def _reset_on_setting_change(**kwargs: Any) -> None:
    # Any setting may shape something here (AFFORDANCES, ROOT_URLCONF, REST_FRAMEWORK,
    # SPECTACULAR_SETTINGS, MIDDLEWARE, a setting that switches an operation on): one rule.
    reset()
