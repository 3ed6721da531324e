"""Where the time goes, for a benchmark's missed goal.

A ratio says that a face costs more than its baseline, not why. On a missed goal both
benchmarks (``make bench``, ``make bench-peers``) run the pair again under cProfile,
alternated as in the measurement, and print the difference of their own time per
request: by package (this library, DRF, Django, the project, C functions), then the
functions that add the most. cProfile slows Python calls more than C ones, so read the
shares, not the milliseconds; a function that the face calls and the baseline does not
shows up whole, one that both call shows what the face adds to it.
"""

from __future__ import annotations

import cProfile
import gc
import pstats
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Split", "profile_pair", "where_time_goes"]

_ROOT = str(Path(__file__).resolve().parents[1]) + "/"  # the repository
_C = "(C functions)"


class Split:
    """One side of a pair: a profiler that runs only around the requests handed to it
    (not what a benchmark does between them) with the garbage collector off, so that a
    collection's pause is not charged to whatever function it interrupted; and, apart,
    the collections the same requests start with the collector on."""

    def __init__(self) -> None:
        self.profile = cProfile.Profile()
        self.calls = 0
        self.counted = 0
        self.collections = [0, 0, 0]

    def profiled(self, run: Callable[[], Any]) -> Any:
        gc.disable()
        self.profile.enable()
        try:
            return run()
        finally:
            self.profile.disable()
            gc.enable()
            self.calls += 1

    def counted_collections(self, run: Callable[[], Any]) -> Any:
        def count(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                self.collections[info["generation"]] += 1

        gc.callbacks.append(count)
        try:
            return run()
        finally:
            gc.callbacks.remove(count)
            self.counted += 1

    def own_ms(self) -> dict[tuple[str, int, str], float]:
        """Own time per request of each function, in ms."""
        stats: Any = pstats.Stats(self.profile).stats  # {(file, line, name): (..., tt, ...)}
        calls = max(self.calls, 1)
        return {key: row[2] * 1000 / calls for key, row in stats.items()}

    def per_request(self) -> str:
        counted = max(self.counted, 1)
        return "/".join(f"{n / counted:.2f}" for n in self.collections)


def profile_pair(
    baseline: Callable[[], Any],
    face: Callable[[], Any],
    requests: int,
    between: Callable[[], Any] | None = None,
) -> list[str]:
    """:func:`where_time_goes` of ``requests`` of each, alternated (``between`` runs after
    each request, unprofiled): first counting collections, then profiled."""
    sides = Split(), Split()
    for measure in (Split.counted_collections, Split.profiled):
        for _ in range(requests):
            for side, run in zip(sides, (baseline, face), strict=True):
                measure(side, run)
                if between is not None:
                    between()
    return where_time_goes(*sides)


def _where(key: tuple[str, int, str]) -> tuple[str, str]:
    """(package, readable name) of a profiled function."""
    filename, line, name = key
    if filename == "~":  # a built-in: "<method 'get' of 'dict' objects>"
        return _C, name
    if "site-packages/" in filename:
        relative = filename.rsplit("site-packages/", 1)[1]
    elif filename.startswith(_ROOT):
        relative = filename[len(_ROOT) :]
    else:
        relative = filename.rsplit("/", 1)[-1]  # the standard library
        return "(standard library)", f"{relative}:{line} {name}"
    return relative.split("/", 1)[0].removesuffix(".py"), f"{relative}:{line} {name}"


def where_time_goes(baseline: Split, face: Split, top: int = 10) -> list[str]:
    """Lines saying what ``face`` spends per request beyond ``baseline``."""
    base, extra = baseline.own_ms(), face.own_ms()
    by_function: dict[tuple[str, str], float] = defaultdict(float)
    for key in base.keys() | extra.keys():
        by_function[_where(key)] += extra.get(key, 0.0) - base.get(key, 0.0)
    by_package: dict[str, float] = defaultdict(float)
    for (package, _), ms in by_function.items():
        by_package[package] += ms
    total = sum(by_package.values())
    packages = sorted(by_package.items(), key=lambda item: -item[1])
    lines = [
        f"  where the time goes (cProfile, {face.calls} requests each, own time per request, "
        f"GC off; face minus baseline = {total:+.2f} ms of {sum(base.values()):.2f} ms "
        "profiled):",
        f"    GC collections per request (gen 0/1/2, GC on): face {face.per_request()}, "
        f"baseline {baseline.per_request()}",
        "    by package: "
        + ", ".join(f"{package} {ms:+.2f} ms" for package, ms in packages if abs(ms) >= 0.01),
    ]
    functions = sorted(by_function.items(), key=lambda item: -item[1])[:top]
    lines.extend(f"    {ms:+7.3f} ms  {name}" for (_, name), ms in functions if ms > 0)
    return lines
