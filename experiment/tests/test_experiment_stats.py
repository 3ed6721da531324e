"""The pre-registered analysis (experiment.stats, experiment.report): known values."""

from __future__ import annotations

from math import erfc, sqrt
from typing import Any

import pytest

from experiment.report import comparisons, fisher_exact
from experiment.stats import cmh, exact_stratified, holm, sign_flip, task_bootstrap, wilson


@pytest.mark.parametrize(
    "table", [(0, 5, 5, 5), (3, 5, 3, 5), (1, 3, 2, 3), (9, 10, 3, 10), (2, 7, 6, 9)]
)
def test_the_stratified_exact_test_of_one_task_is_fishers(table: tuple[int, int, int, int]):
    assert exact_stratified([table]) == pytest.approx(fisher_exact(*table))


def test_the_stratified_exact_test_sums_the_tasks_and_ignores_the_uninformative():
    # Every run passed or every run failed: a task that cannot tell the arms apart.
    uninformative = [(5, 5, 5, 5), (0, 5, 0, 5)]
    assert exact_stratified(uninformative) == 1.0
    one = exact_stratified([(5, 5, 0, 5)])
    assert exact_stratified([(5, 5, 0, 5), *uninformative]) == pytest.approx(one)
    # Two tasks pointing the same way are stronger evidence than one.
    assert exact_stratified([(5, 5, 0, 5), (5, 5, 0, 5)]) < one
    # Opposite ways cancel out.
    assert exact_stratified([(5, 5, 0, 5), (0, 5, 5, 5)]) == pytest.approx(1.0)
    # By hand: two tasks (2 of 2 vs 0 of 2 each), X = arm 1's passes ~ H + H, each
    # H in {0, 1, 2} with probabilities 1/6, 4/6, 1/6; X = 4 has 1/36, X = 0 too.
    assert exact_stratified([(2, 2, 0, 2), (2, 2, 0, 2)]) == pytest.approx(2 / 36)


def test_cmh_and_the_mantel_haenszel_odds_ratio_by_hand():
    strata = [(3, 5, 1, 5), (4, 5, 2, 5)]
    chi2, p, odds = cmh(strata)
    # Excess over expectation 1 + 1, variance 2/3 + 2/3.
    assert chi2 == pytest.approx(3.0)
    assert p == pytest.approx(erfc(sqrt(1.5)))
    # (3*4/10 + 4*3/10) / (1*2/10 + 2*1/10)
    assert odds == pytest.approx(6.0)
    assert cmh([(5, 5, 5, 5)]) == (0.0, 1.0, None)
    assert cmh([(5, 5, 0, 5)])[2] == float("inf")


def test_the_sign_flip_test_is_exact_for_few_tasks_and_seeded_for_many():
    assert sign_flip([1, 1, 1, 1]) == (2 / 16, True)
    assert sign_flip([1, -1]) == (1.0, True)
    assert sign_flip([0, 0, 0]) == (1.0, True)
    # Zeros carry no sign: the same as without them.
    assert sign_flip([0.5, 0, 1, 0]) == sign_flip([0.5, 1])
    p, exact = sign_flip([1.0] * 20, seed=3)
    assert not exact and p == pytest.approx(1 / 20_001, abs=1e-4)
    assert sign_flip([1.0] * 20, seed=3) == (p, exact)


def test_holm_steps_down_and_stays_monotone():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adjusted == pytest.approx({"a": 0.03, "c": 0.06, "b": 0.06})
    assert holm({"only": 0.2}) == {"only": 0.2}
    assert holm({"x": 0.6, "y": 0.9})["x"] == 1.0


def test_the_task_bootstrap_resamples_tasks_and_is_seeded():
    first = {"T1": [0.0, 0.0], "T2": [1.0, 1.0], "T3": [0.0, 1.0]}
    second = {"T1": [1.0, 1.0], "T2": [1.0, 1.0], "T3": [1.0, 1.0], "T4": [1.0]}
    estimate, low, high = task_bootstrap(first, second, seed=1)
    # Per task (T4 is in one arm only): +1, 0, +0.5.
    assert estimate == pytest.approx(0.5)
    assert 0.0 <= low <= estimate <= high <= 1.0
    assert task_bootstrap(first, second, seed=1) == (estimate, low, high)
    assert task_bootstrap(first, first) == (0.0, 0.0, 0.0)


def test_wilson_on_known_values():
    assert wilson(0, 10)[1] == pytest.approx(0.2775, abs=1e-3)
    assert wilson(10, 10)[0] == pytest.approx(0.7225, abs=1e-3)


def _run(task: str, interface: str, ok: bool, invalid: int = 0, **kw: Any) -> dict[str, Any]:
    return {
        "task": task,
        "interface": interface,
        "agent": "llm",
        "condition": "plain",
        "repeat": kw.get("repeat", 0),
        "success": ok,
        "refusedWrites": {
            "policy": invalid,
            "madeUpVersion": 0,
            "addressing": 0,
            "conflict": 0,
        },
    }


def test_the_preregistered_family_is_holm_adjusted_over_the_tasks_both_arms_ran():
    runs = []
    for t in range(8):
        for repeat in range(3):
            runs.append(_run(f"T{t}", "A", t < 2, invalid=2, repeat=repeat))
            runs.append(_run(f"T{t}", "B", t < 6, invalid=0, repeat=repeat))
            runs.append(_run(f"T{t}", "B-focus", t < 3, invalid=1, repeat=repeat))
    runs.append(_run("S5", "C", True))  # a task of C's alone: compared nowhere
    found = comparisons(runs)["llm"]
    b, focus = found["primary"]
    assert (b["treatment"], b["baseline"], b["tasks"]) == ("B", "A", 8)
    assert b["success"]["treatment"] == [18, 24] and b["success"]["baseline"] == [6, 24]
    assert b["success"]["difference"][0] == pytest.approx(0.5)
    assert b["invalid"]["difference"][0] == pytest.approx(-2.0)
    # Every task favours B on invalid writes: 2 of 2^8 sign patterns are as extreme.
    assert b["invalid"]["permutationP"] == pytest.approx(2 / 256)
    family = {
        "sb": b["success"]["exactP"],
        "ib": b["invalid"]["permutationP"],
        "sf": focus["success"]["exactP"],
        "if": focus["invalid"]["permutationP"],
    }
    adjusted = holm(family)
    assert b["success"]["holmP"] == pytest.approx(adjusted["sb"])
    assert focus["invalid"]["holmP"] == pytest.approx(adjusted["if"])
    assert b["success"]["holmP"] >= b["success"]["exactP"]
    # The exploratory comparisons are not adjusted; C ran nothing A ran.
    [secondary] = found["secondary"]
    assert (secondary["treatment"], secondary["baseline"]) == ("B-focus", "B")
    assert "holmP" not in secondary["success"]
