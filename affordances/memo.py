"""Documents built once per catalog and caller's capability set, not once per request.

The catalog, the MCP tool list and the OpenAPI document depend on the code, the settings
and what the caller may know about — never on object state or on earlier requests — so
each face keys what it builds by exactly those inputs and builds it once per process.
Keys must name everything the value depends on: a key that forgets the caller's
capabilities would serve one caller's document to another.

The documents are kept in one :class:`~affordances.caches.Cache`, bounded in entries
and in bytes (least recently used out) and emptied whenever the catalog is rebuilt or a
setting changes (tests, ``override_settings``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from affordances.caches import Cache

__all__ = [
    "DOCUMENTS",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "PARSED_JSON_FACTOR",
    "clear",
    "memoized",
    "stored_bytes",
]

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

DOCUMENTS: Cache[Hashable, Any] = Cache(
    "documents",
    keys="the document's kind, then all it depends on: capability set, format, host, language",
    max_entries=MAX_ENTRIES,
    max_bytes=MAX_BYTES,
)


def memoized(key: Hashable, build: Callable[[], T], *, size: Callable[[T], int]) -> T:
    """The document kept for ``key``, built the first time it is asked; ``size(value)``
    is what keeping it costs, in bytes."""
    value: T = DOCUMENTS.get(key, build, size=size)
    return value


def stored_bytes() -> int:
    """What the store holds now, in bytes (as the values' ``size`` said)."""
    return DOCUMENTS.stored_bytes


def clear() -> None:
    DOCUMENTS.clear()
