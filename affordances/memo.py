"""Documents built once per catalog and caller's capability set, not once per request.

The catalog, the MCP tool list and the OpenAPI document depend on the code, the settings
and what the caller may know about — never on object state or on earlier requests — so
each face keys what it builds by exactly those inputs and builds it once per process.
Keys must name everything the value depends on: a key that forgets the caller's
capabilities would serve one caller's document to another.

The store is bounded in entries and in bytes (least recently used out) and emptied
whenever the catalog is rebuilt or a setting changes (tests, ``override_settings``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from affordances import registry

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "PARSED_JSON_FACTOR", "clear", "memoized", "stored_bytes"]

T = TypeVar("T")

# Per capability set (a handful of roles), format and host: far more than a site has.
MAX_ENTRIES = 512
# What one process keeps, whatever the keys: 32 MiB. Keys are validated values (a role's
# capabilities, a known language or API version, a canonical cursor), so a site's real
# documents fit many times over; a key space an attacker could still grow (a document per
# user, say) evicts the least recently used instead of growing the worker.
MAX_BYTES = 32 * 1024 * 1024
# A parsed JSON document (dicts, lists, strings) takes about 4.6 times the bytes of its
# encoding in CPython (measured on the demo's OpenAPI document: 106 kB of JSON, 489 kB
# of objects); sizes of parsed documents are estimated with this.
PARSED_JSON_FACTOR = 5

_lock = threading.Lock()
_store: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
_bytes = 0


def memoized(key: Hashable, build: Callable[[], T], *, size: Callable[[T], int]) -> T:
    """The value kept for ``key``, built (outside the lock) the first time it is asked.

    ``size(value)`` is what keeping it costs, in bytes; a value larger than the whole
    bound is returned and not kept.
    """
    global _bytes
    with _lock:
        if key in _store:
            _store.move_to_end(key)
            kept: T = _store[key][0]
            return kept
    value = build()
    cost = max(int(size(value)), 1)
    if cost > MAX_BYTES:
        return value
    with _lock:
        previous = _store.pop(key, None)
        if previous is not None:
            _bytes -= previous[1]
        _store[key] = (value, cost)
        _bytes += cost
        while len(_store) > MAX_ENTRIES or _bytes > MAX_BYTES:
            _bytes -= _store.popitem(last=False)[1][1]
    return value


def stored_bytes() -> int:
    """What the store holds now, in bytes (as the values' ``size`` said)."""
    with _lock:
        return _bytes


@registry.derived
def clear() -> None:
    global _bytes
    with _lock:
        _store.clear()
        _bytes = 0
