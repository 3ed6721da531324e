"""One cache facility for every value the library derives from code and settings.

What the library works out once per process — the catalog's documents, what a state
alone decides about an operation, an input's fields, a form, a reversed path, the MCP
servers — is kept in a named :class:`Cache`. Each one declares its keys (everything the
value depends on: a key that forgets an input would serve one caller's value to
another), is bounded in entries and, where values vary in size, in bytes, evicts the
least recently used entry when full (never the whole store), and is forgotten with
everything else derived from settings and the URLconf (:mod:`affordances.registry`).

Values are shared between requests and threads: they are immutable, or read only by
convention where a cache says so. A value is built outside the lock (two threads may
build it at once; one copy is kept), so a slow build never blocks the other keys.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, ParamSpec, TypeVar

from affordances import registry

__all__ = ["Cache", "cached", "caches"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = ParamSpec("P")

_lock = threading.Lock()
_caches: dict[str, Cache[Hashable, object]] = {}


def _one(value: object) -> int:
    return 1


class Cache(Generic[K, V]):
    """A bounded, least-recently-used map from ``keys`` to derived values.

    ``max_bytes`` bounds what ``size(value)`` adds up to (estimated bytes; the default
    counts each entry as one); ``max_entries`` bounds the entries whatever their size.
    A value larger than ``max_bytes`` is returned and not kept.
    """

    def __init__(
        self,
        name: str,
        *,
        keys: str,
        max_entries: int,
        max_bytes: int | None = None,
        size: Callable[[V], int] = _one,
    ) -> None:
        self.name = name
        self.keys = keys
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self._lock = threading.Lock()
        self._store: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        with _lock:
            if name in _caches:
                raise ValueError(f"A cache named {name!r} exists already.")
            _caches[name] = self  # type: ignore[assignment]
        registry.derived(self.clear)

    def get(self, key: K, build: Callable[[], V], *, size: Callable[[V], int] | None = None) -> V:
        """The value kept for ``key``, built by ``build()`` the first time it is asked."""
        try:
            value, _cost = self._store[key]
        except KeyError:
            pass
        else:
            # Atomic on an OrderedDict; evicted meanwhile: fine. (Not contextlib.suppress:
            # this is every row's path, and the context manager costs more than the move.)
            try:  # noqa: SIM105
                self._store.move_to_end(key)
            except KeyError:
                pass
            return value
        value = build()
        cost = max(int((size or self._size)(value)), 1)
        if self.max_bytes is not None and cost > self.max_bytes:
            return value
        with self._lock:
            previous = self._store.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._store[key] = (value, cost)
            self._bytes += cost
            while len(self._store) > self.max_entries or (
                self.max_bytes is not None and self._bytes > self.max_bytes
            ):
                self._bytes -= self._store.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        with self._lock:
            self._store.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._store)

    def __contains__(self, key: object) -> bool:
        return key in self._store

    def __iter__(self) -> Iterator[K]:
        """The keys kept now (a copy: the cache may change meanwhile)."""
        with self._lock:
            return iter(list(self._store))

    @property
    def stored_bytes(self) -> int:
        """What the cache holds now, as its values' ``size`` said."""
        return self._bytes

    def __repr__(self) -> str:
        return f"<Cache {self.name}: {len(self)}/{self.max_entries} of ({self.keys})>"


def caches() -> list[Cache[Hashable, object]]:
    """Every cache of the process, by name."""
    with _lock:
        return [_caches[name] for name in sorted(_caches)]


def cached(
    name: str, *, keys: str, max_entries: int, max_bytes: int | None = None
) -> Callable[[Callable[P, V]], Callable[P, V]]:
    """A function whose results are kept in a :class:`Cache` of their own, keyed by its
    (hashable) arguments: ``keys`` names them."""

    def decorate(function: Callable[P, V]) -> Callable[P, V]:
        cache: Cache[Hashable, V] = Cache(
            name, keys=keys, max_entries=max_entries, max_bytes=max_bytes
        )

        @functools.wraps(function)
        def kept(*args: P.args, **kwargs: P.kwargs) -> V:
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return cache.get(key, lambda: function(*args, **kwargs))

        kept.cache = cache  # type: ignore[attr-defined]
        return kept

    return decorate
