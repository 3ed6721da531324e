"""One cache facility (issue 51, debt 1): every value derived from code and settings is
kept in a named, bounded, least-recently-used :class:`~affordances.caches.Cache`,
forgotten with the catalog; no module keeps a cache of its own."""

from __future__ import annotations

import ast
import uuid
from pathlib import Path

import pytest
from django.test import override_settings

from affordances import registry
from affordances.caches import Cache, cached, caches

PACKAGE = Path(__file__).resolve().parent.parent / "affordances"


@pytest.fixture
def cache() -> Cache[str, str]:
    made: Cache[str, str] = Cache(
        f"test {uuid.uuid4()}", keys="a word", max_entries=3, max_bytes=10, size=len
    )
    return made


def test_the_least_recently_used_entry_goes_not_the_whole_store(cache):
    for word in ("a", "b", "c"):
        cache.get(word, lambda word=word: word)
    assert cache.get("a", lambda: "rebuilt") == "a"  # used: now the most recent
    cache.get("d", lambda: "d")
    assert len(cache) == 3
    assert "b" not in cache  # the least recently used
    assert all(word in cache for word in ("a", "c", "d"))


def test_the_bytes_are_bounded_and_a_value_too_big_is_not_kept(cache):
    cache.get("six", lambda: "xxxxxx")
    cache.get("five", lambda: "yyyyy")
    assert cache.stored_bytes <= 10
    assert "six" not in cache and "five" in cache
    assert cache.get("huge", lambda: "z" * 11) == "z" * 11
    assert "huge" not in cache


def test_a_value_is_built_once_per_key(cache):
    built = []
    for _ in range(3):
        cache.get("k", lambda: built.append(1) or "v")
    assert built == [1]


def test_a_cached_function_keeps_its_results_in_a_named_cache():
    calls = []

    @cached(f"test function {uuid.uuid4()}", keys="a number", max_entries=2)
    def double(n: int) -> int:
        calls.append(n)
        return 2 * n

    assert [double(1), double(1), double(2), double(3), double(1)] == [2, 2, 4, 6, 2]
    assert calls == [1, 2, 3, 1]  # 1 was evicted by 3 (two entries), then built again


def test_every_cache_is_forgotten_with_the_catalog(client, django_user_model):
    # Fill the library's caches as requests do, then change a setting.
    from affordances.catalog import get_catalog

    get_catalog()
    registry.reset()
    named = {cache.name: cache for cache in caches()}
    for name in ("documents", "state outcomes", "input fields", "reversed paths"):
        assert name in named, name
    named["documents"].get(("probe",), lambda: b"kept", size=len)
    with override_settings(AFFORDANCES_PROBE=True):
        pass
    assert all(len(cache) == 0 for cache in caches()), [c for c in caches() if len(c)]


def test_every_cache_is_bounded():
    for cache in caches():
        assert 0 < cache.max_entries <= 4096, cache
        assert cache.keys, cache  # declared keys: what the value depends on


def _module_level_caches(path: Path) -> list[str]:
    """Module-level dicts registered to be forgotten, and functools caches: a cache of
    the module's own instead of the facility."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [a.name for a in node.names if a.name in ("cache", "lru_cache")]
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "registry.derived"
            and node.args
            and ast.unparse(node.args[0]).endswith((".clear", ".cache_clear"))
        ):
            found.append(ast.unparse(node))
    return found


# A broker is a connection, not a derived value: one per process, closed on forget.
# The facility itself registers each cache's clear.
NOT_CACHES = {
    "brokers.py": ["cache", "registry.derived(get_broker.cache_clear)"],
    "caches.py": ["registry.derived(self.clear)"],
}


def test_no_module_keeps_a_cache_of_its_own():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE))
        found = _module_level_caches(path)
        if found and found != NOT_CACHES.get(relative):
            offenders[relative] = found
    assert offenders == {}
