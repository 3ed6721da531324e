"""The table `make load` prints, from locust's final stats (``--json-file``)."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["percentile", "print_table"]


def percentile(response_times: dict[str, int], count: int, fraction: float) -> int:
    """The response time (ms, as locust buckets it) that ``fraction`` of requests beat."""
    rank = max(1, math.ceil(count * fraction - 1e-9))  # 0.99 * 100 is 99.00000000000001
    seen = 0
    for milliseconds, hits in sorted((int(k), v) for k, v in response_times.items()):
        seen += hits
        if seen >= rank:
            return milliseconds
    return 0


def print_table(entries: list[dict[str, Any]]) -> tuple[int, int]:
    """Print requests, failures, throughput and p50/p99 per endpoint; return the totals.

    ``entries`` is locust's ``--json-file`` (its final stats, taken after every user
    stopped). Throughput is over the whole run, from the first request to the last.
    """
    entries = [e for e in entries if e["num_requests"]]
    if not entries:
        print("no requests were made")
        return 0, 0
    seconds = max(e["last_request_timestamp"] for e in entries) - min(
        e["start_time"] for e in entries
    )
    seconds = max(seconds, 1e-9)
    merged: dict[str, int] = {}
    for entry in entries:
        for key, hits in entry["response_times"].items():
            merged[key] = merged.get(key, 0) + hits
    total = sum(e["num_requests"] for e in entries)
    failed = sum(e["num_failures"] for e in entries)
    rows = [
        (e["name"], e["num_requests"], e["num_failures"], e["response_times"])
        for e in sorted(entries, key=lambda e: e["name"])
    ]
    header = (
        f"{'endpoint':<40} {'requests':>8} {'fail':>5} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7}"
    )
    print(header)
    print("-" * len(header))
    for index, (name, count, failures, times) in enumerate([*rows, ("all", total, failed, merged)]):
        if index == len(rows):
            print("-" * len(header))
        print(
            f"{name[:40]:<40} {count:>8} {failures:>5} {count / seconds:>7.1f} "
            f"{percentile(times, count, 0.50):>7} {percentile(times, count, 0.99):>7}"
        )
    print(f"over {seconds:.1f} s")
    return total, failed
