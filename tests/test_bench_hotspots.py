"""Where the time goes (bench/hotspots.py), as both benchmarks print it under a missed
goal: the face's own time beyond its baseline, by package and by function."""

from __future__ import annotations

import gc

from bench.hotspots import profile_pair


def _shared(n: int) -> int:
    return sum(range(n))


def _only_the_face_does_this(n: int) -> int:
    total = 0
    for i in range(n):  # in its own frame: its own time
        total += i * i
    return total


def test_the_work_only_the_face_does_comes_first_and_the_shared_work_cancels() -> None:
    lines = profile_pair(
        lambda: _shared(2_000),
        lambda: (_shared(2_000), _only_the_face_does_this(20_000)),
        requests=5,
    )
    assert lines[0].startswith("  where the time goes (cProfile, 5 requests each")
    assert lines[1].startswith("    GC collections per request (gen 0/1/2, GC on): face ")
    assert lines[2].startswith("    by package: tests +")
    # The face's own function leads; what both do cancels out (to the noise).
    functions = {line.split(" ms  ")[1]: float(line.split(" ms  ")[0]) for line in lines[3:]}
    leader = next(iter(functions))
    assert leader == "tests/test_bench_hotspots.py:15 _only_the_face_does_this", lines
    shared = functions.get("tests/test_bench_hotspots.py:11 _shared", 0.0)
    assert shared < functions[leader] / 10, lines


def test_profiled_requests_run_without_the_collector_and_counted_ones_with_it() -> None:
    """A collection's pause is charged to whatever function it interrupts: profiled, the
    collector is off (and on again after); the collections are counted apart."""
    seen: list[bool] = []
    profile_pair(lambda: None, lambda: seen.append(gc.isenabled()), requests=2)
    assert seen == [True, True, False, False]
    assert gc.isenabled()
