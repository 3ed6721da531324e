"""The consistency checker of `make load` (load/checks.py), on crafted audit histories."""

from __future__ import annotations

from load.checks import Audit, OrderNow, Race, Success, check_consistency
from load.stats import percentile

CONFIRM = ("confirm_order", "pending", "confirmed")
SHIP = ("ship_order", "confirmed", "shipped")
DELIVER = ("deliver_order", "shipped", "delivered")


def history(order_id: int, *steps: tuple[str, str, str], first_id: int = 1, versions=None):
    versions = versions or list(range(2, len(steps) + 2))
    return [
        Audit(
            id=first_id + index,
            order_id=order_id,
            operation=operation,
            source_state=source,
            target_state=target,
            version=version,
        )
        for index, ((operation, source, target), version) in enumerate(
            zip(steps, versions, strict=True)
        )
    ]


def consistent():
    """Order 1 went pending → delivered, order 2 was only confirmed, order 3 untouched."""
    audits = [
        *history(1, CONFIRM, SHIP, DELIVER, first_id=1),
        *history(2, CONFIRM, first_id=10),
    ]
    seeded = {1: "pending", 2: "pending", 3: "shipped"}
    orders = {
        1: OrderNow("delivered", 4),
        2: OrderNow("confirmed", 2),
        3: OrderNow("shipped", 1),
    }
    successes = [
        Success(1, "confirm_order", 2, "confirmed"),
        Success(1, "ship_order", 3, "shipped", via="mcp"),
        Success(1, "deliver_order", 4, "delivered"),
        Success(2, "confirm_order", 2, "confirmed"),
    ]
    return seeded, orders, audits, successes


def test_a_consistent_history_passes():
    seeded, orders, audits, successes = consistent()

    report = check_consistency(
        seeded=seeded,
        orders=orders,
        audits=audits,
        successes=successes,
        races=[Race(2, 1, winners=1), Race(1, 3, winners=0)],
    )

    assert report.ok, report.problems
    assert report.checked_orders == 3
    assert report.checked_records == 4
    assert report.checked_successes == 4
    assert report.checked_races == 2
    assert report.unseen_records == 0


def test_a_record_the_generator_never_saw_is_not_a_problem():
    seeded, orders, audits, _ = consistent()

    report = check_consistency(seeded=seeded, orders=orders, audits=audits, successes=[])

    assert report.ok, report.problems
    assert report.unseen_records == 4


def test_a_gap_in_the_versions_is_detected():
    seeded = {1: "pending"}
    audits = history(1, CONFIRM, SHIP, versions=[2, 4])

    report = check_consistency(seeded=seeded, orders={1: OrderNow("shipped", 4)}, audits=audits)

    assert not report.ok
    assert any("missing [3]" in problem for problem in report.problems), report.problems


def test_a_first_version_other_than_two_is_a_gap():
    audits = history(1, CONFIRM, versions=[3])

    report = check_consistency(
        seeded={1: "pending"}, orders={1: OrderNow("confirmed", 3)}, audits=audits
    )

    assert any("missing [2]" in problem for problem in report.problems), report.problems


def test_a_repeated_version_is_detected():
    # Two transitions both claiming version 2: a lost update.
    audits = history(1, CONFIRM, SHIP, versions=[2, 2])

    report = check_consistency(
        seeded={1: "pending"}, orders={1: OrderNow("shipped", 2)}, audits=audits
    )

    assert not report.ok
    assert any("repeated [2]" in problem for problem in report.problems), report.problems


def test_a_success_with_two_records_is_detected():
    audits = history(1, CONFIRM, CONFIRM, versions=[2, 2])

    report = check_consistency(
        seeded={1: "pending"},
        orders={1: OrderNow("confirmed", 2)},
        audits=audits,
        successes=[Success(1, "confirm_order", 2, "confirmed")],
    )

    assert any("has 2 audit records, not 1" in problem for problem in report.problems)


def test_a_success_without_a_record_is_detected():
    seeded, orders, audits, successes = consistent()
    audits = [a for a in audits if not (a.order_id == 1 and a.version == 3)]

    report = check_consistency(seeded=seeded, orders=orders, audits=audits, successes=successes)

    assert any("has 0 audit records" in problem for problem in report.problems)
    assert any("missing [3]" in problem for problem in report.problems)


def test_a_success_audited_as_another_operation_is_detected():
    seeded, orders, audits, _ = consistent()

    report = check_consistency(
        seeded=seeded,
        orders=orders,
        audits=audits,
        successes=[Success(2, "cancel_order", 2, "cancelled")],
    )

    assert any("audited as confirm_order" in problem for problem in report.problems)


def test_an_order_version_beyond_its_history_is_detected():
    seeded, orders, audits, successes = consistent()
    orders = {**orders, 3: OrderNow("shipped", 2)}  # changed without an audit record

    report = check_consistency(seeded=seeded, orders=orders, audits=audits, successes=successes)

    assert report.problems == ["order 3: version is 2 but its last audit record says 1"]


def test_a_state_that_is_not_the_last_target_is_detected():
    seeded, orders, audits, successes = consistent()
    orders = {**orders, 2: OrderNow("cancelled", 2)}

    report = check_consistency(seeded=seeded, orders=orders, audits=audits, successes=successes)

    assert report.problems == ["order 2: state is 'cancelled' but its history ends in 'confirmed'"]


def test_a_broken_chain_of_states_is_detected():
    audits = history(1, CONFIRM, DELIVER)  # delivered from shipped, but it was confirmed

    report = check_consistency(
        seeded={1: "pending"}, orders={1: OrderNow("delivered", 3)}, audits=audits
    )

    assert len(report.problems) == 1
    assert "starts in 'shipped', but the order was 'confirmed'" in report.problems[0]


def test_the_first_record_starts_from_the_seeded_state():
    audits = history(1, SHIP)

    report = check_consistency(
        seeded={1: "pending"}, orders={1: OrderNow("shipped", 2)}, audits=audits
    )

    assert "starts in 'confirmed', but the order was 'pending'" in report.problems[0]


def test_two_winners_of_one_race_are_detected():
    seeded, orders, audits, successes = consistent()

    report = check_consistency(
        seeded=seeded,
        orders=orders,
        audits=audits,
        successes=successes,
        races=[Race(1, 3, winners=2)],
    )

    assert report.problems == ["order 1: 2 racing requests with If-Match 3 all succeeded"]


def test_problems_are_listed_up_to_a_limit():
    audits = [a for n in range(1, 30) for a in history(n, CONFIRM, versions=[5], first_id=n)]
    seeded = {n: "pending" for n in range(1, 30)}
    orders = {n: OrderNow("confirmed", 5) for n in range(1, 30)}

    report = check_consistency(seeded=seeded, orders=orders, audits=audits, limit=10)

    assert len(report.problems) == 11
    assert report.problems[-1].startswith("…")


# --- the table's percentiles (load/stats.py) --------------------------------------------


def test_percentiles_come_from_locusts_buckets():
    times = {"10": 50, "20": 40, "300": 9, "900": 1}  # ms -> requests, as locust writes them

    assert percentile(times, 100, 0.50) == 10
    assert percentile(times, 100, 0.51) == 20
    assert percentile(times, 100, 0.99) == 300
    assert percentile(times, 100, 1.0) == 900
