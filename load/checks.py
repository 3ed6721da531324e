"""The consistency checks run after a load test, on plain data (no database needed).

Given what the load generator saw succeed, the orders as seeded and as they are now,
and every audit record of those orders, :func:`check_consistency` lists each way the
history fails to add up:

- every success the generator saw has exactly one audit record (same order, version,
  operation and target state);
- per order, the audit versions are 2, 3, …, N with no gap and no repeat, and N is the
  order's version (1 when it has no record);
- each order's state is the target state of its last record (its seeded state when it
  has none), and every record starts where the previous one ended (the first where
  the order was seeded);
- of the transitions raced with one ``If-Match``, at most one succeeded.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "Audit",
    "OrderNow",
    "Race",
    "Report",
    "Success",
    "check_consistency",
]


@dataclass(frozen=True)
class Audit:
    """One audit record, as stored (``id`` gives the order they were written in)."""

    id: int
    order_id: int
    operation: str
    source_state: str
    target_state: str
    version: int


@dataclass(frozen=True)
class Success:
    """A transition the load generator saw succeed: what the response body said."""

    order_id: int
    operation: str
    version: int
    state: str
    via: str = "api"


@dataclass(frozen=True)
class OrderNow:
    state: str
    version: int


@dataclass(frozen=True)
class Race:
    """Concurrent attempts of one transition on one order with the same ``If-Match``."""

    order_id: int
    expected_version: int
    winners: int


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    checked_orders: int = 0
    checked_records: int = 0
    checked_successes: int = 0
    checked_races: int = 0
    unseen_records: int = 0  # written, but the generator never saw the response

    @property
    def ok(self) -> bool:
        return not self.problems


def check_consistency(
    *,
    seeded: Mapping[int, str],
    orders: Mapping[int, OrderNow],
    audits: Iterable[Audit],
    successes: Iterable[Success] = (),
    races: Iterable[Race] = (),
    limit: int = 50,
) -> Report:
    """Check the history of ``orders`` (see the module docstring); never raises."""
    report = Report()
    by_order: dict[int, list[Audit]] = defaultdict(list)
    for record in sorted(audits, key=lambda r: r.id):
        by_order[record.order_id].append(record)
        report.checked_records += 1

    def problem(text: str) -> None:
        if len(report.problems) < limit:
            report.problems.append(text)
        elif len(report.problems) == limit:
            report.problems.append("… (more problems not listed)")

    for order_id in sorted(set(orders) | set(by_order)):
        report.checked_orders += 1
        _check_order(order_id, seeded, orders, by_order.get(order_id, []), problem)

    index: dict[tuple[int, int], list[Audit]] = defaultdict(list)
    for records in by_order.values():
        for record in records:
            index[(record.order_id, record.version)].append(record)
    seen: Counter[tuple[int, int]] = Counter()
    for success in successes:
        report.checked_successes += 1
        key = (success.order_id, success.version)
        seen[key] += 1
        matches = index.get(key, [])
        if len(matches) != 1:
            problem(
                f"order {success.order_id}: the {success.via} success of {success.operation} "
                f"(version {success.version}) has {len(matches)} audit records, not 1"
            )
            continue
        record = matches[0]
        if (record.operation, record.target_state) != (success.operation, success.state):
            problem(
                f"order {success.order_id}: version {success.version} was answered as "
                f"{success.operation} → {success.state} but audited as "
                f"{record.operation} → {record.target_state}"
            )
    for key, count in seen.items():
        if count > 1:
            problem(f"order {key[0]}: {count} successes were answered with version {key[1]}")
    report.unseen_records = sum(1 for key in index if key not in seen)

    for race in races:
        report.checked_races += 1
        if race.winners > 1:
            problem(
                f"order {race.order_id}: {race.winners} racing requests with If-Match "
                f"{race.expected_version} all succeeded"
            )
    return report


def _check_order(
    order_id: int,
    seeded: Mapping[int, str],
    orders: Mapping[int, OrderNow],
    records: list[Audit],
    problem: Callable[[str], None],
) -> None:
    now = orders.get(order_id)
    if now is None:
        problem(f"order {order_id}: has audit records but does not exist")
        return
    if order_id not in seeded:
        problem(f"order {order_id}: was not seeded (no starting state to check against)")
        return

    versions = [record.version for record in records]
    expected = list(range(2, len(records) + 2))
    if versions != expected:
        repeats = sorted(v for v, n in Counter(versions).items() if n > 1)
        missing = sorted(set(range(2, max(versions, default=1) + 1)) - set(versions))
        details = []
        if repeats:
            details.append(f"repeated {repeats}")
        if missing:
            details.append(f"missing {missing}")
        if not details:
            details.append("out of order")
        problem(f"order {order_id}: audit versions {versions}: {', '.join(details)}")

    last_version = versions[-1] if versions else 1
    if now.version != last_version:
        problem(
            f"order {order_id}: version is {now.version} but its last audit record "
            f"says {last_version}"
        )

    state = seeded[order_id]
    for record in records:
        if record.source_state != state:
            problem(
                f"order {order_id}: audit record {record.id} ({record.operation}, version "
                f"{record.version}) starts in {record.source_state!r}, but the order was "
                f"{state!r}"
            )
        state = record.target_state
    if now.state != state:
        problem(f"order {order_id}: state is {now.state!r} but its history ends in {state!r}")
