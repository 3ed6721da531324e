"""Documents built once per catalog and caller's capability set, not once per request.

The catalog, the MCP tool list and the OpenAPI document depend on the code, the settings
and what the caller may know about — never on object state or on earlier requests — so
each face keys what it builds by exactly those inputs and builds it once per process.
Keys must name everything the value depends on: a key that forgets the caller's
capabilities would serve one caller's document to another.

The store is bounded (least recently used out) and emptied whenever the catalog is
rebuilt or a setting changes (tests, ``override_settings``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from django.core.signals import setting_changed
from django.dispatch import receiver

__all__ = ["MAX_ENTRIES", "clear", "memoized"]

T = TypeVar("T")

# Per capability set (a handful of roles), format and host: far more than a site has.
MAX_ENTRIES = 512

_lock = threading.Lock()
_store: OrderedDict[Hashable, Any] = OrderedDict()


def memoized(key: Hashable, build: Callable[[], T]) -> T:
    """The value kept for ``key``, built (outside the lock) the first time it is asked."""
    with _lock:
        if key in _store:
            _store.move_to_end(key)
            return _store[key]
    value = build()
    with _lock:
        _store[key] = value
        while len(_store) > MAX_ENTRIES:
            _store.popitem(last=False)
    return value


def clear() -> None:
    with _lock:
        _store.clear()


@receiver(setting_changed)
def _clear_on_settings_change(**kwargs: Any) -> None:
    # Any setting may shape a document (REST_FRAMEWORK, SPECTACULAR_SETTINGS, the URLconf).
    clear()
