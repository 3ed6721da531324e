"""The statistics of the pre-registered analysis (docs/experiment/preregistration.md).

Pure Python (scipy is not a dependency): every function is small, exact where it can
be, and seeded where it samples.

- :func:`wilson` — a success rate's 95% score interval.
- :func:`exact_stratified` — the conditional exact test of "no difference in success"
  between two arms, stratified by task: with every task's margins fixed (runs per arm,
  passes in all), the passes of the first arm summed over tasks follow a convolution of
  hypergeometric distributions; the two-sided p sums the sums at most as likely as the
  one seen (as Fisher's test does for one task — it *is* Fisher's test then).
- :func:`cmh` — the Cochran-Mantel-Haenszel χ² (1 df, no continuity correction) and the
  Mantel-Haenszel common odds ratio, the usual large-sample companions.
- :func:`sign_flip` — the task-paired permutation test of a mean difference: under
  the null each task's difference is as likely negated; exact up to 16 tasks with a
  non-zero difference, else 20,000 seeded draws.
- :func:`task_bootstrap` — a percentile interval of a per-task statistic's mean
  difference, resampling tasks (the unit the task set was drawn as) with replacement.
- :func:`holm` — Holm's step-down adjustment over a family of p-values.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from math import comb, erfc, sqrt
from statistics import mean

__all__ = [
    "Stratum",
    "cmh",
    "exact_stratified",
    "holm",
    "sign_flip",
    "task_bootstrap",
    "wilson",
]

# (passed in arm 1, runs in arm 1, passed in arm 2, runs in arm 2) of one task.
Stratum = tuple[int, int, int, int]
_TOLERANCE = 1 + 1e-7


def wilson(passed: int, runs: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a success rate (sound at small n and at 0 or n)."""
    if runs == 0:
        return (0.0, 1.0)
    rate = passed / runs
    centre = (rate + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z / (1 + z * z / runs) * sqrt(rate * (1 - rate) / runs + z * z / (4 * runs * runs))
    return (max(0.0, centre - half), min(1.0, centre + half))


def _hypergeometric(first_runs: int, second_runs: int, passed: int) -> dict[int, float]:
    """P(x of the ``passed`` runs are arm 1's) with the margins fixed."""
    total = first_runs + second_runs
    low, high = max(0, passed - second_runs), min(first_runs, passed)
    denominator = comb(total, passed)
    return {
        x: comb(first_runs, x) * comb(second_runs, passed - x) / denominator
        for x in range(low, high + 1)
    }


def exact_stratified(strata: Sequence[Stratum]) -> float:
    """Two-sided p of the conditional exact test of no difference, stratified (see the
    module). 1.0 when no task can tell the arms apart (every run passed, or none)."""
    distribution = {0: 1.0}
    seen = 0
    for a_passed, a_runs, b_passed, b_runs in strata:
        if a_runs == 0 or b_runs == 0:
            continue
        seen += a_passed
        one = _hypergeometric(a_runs, b_runs, a_passed + b_passed)
        convolved: dict[int, float] = {}
        for total, p in distribution.items():
            for x, q in one.items():
                convolved[total + x] = convolved.get(total + x, 0.0) + p * q
        distribution = convolved
    observed = distribution.get(seen, 0.0)
    p = sum(q for q in distribution.values() if q <= observed * _TOLERANCE)
    return min(1.0, p)


def cmh(strata: Sequence[Stratum]) -> tuple[float, float, float | None]:
    """(χ², p, Mantel-Haenszel common odds ratio of arm 1 vs arm 2) over the tasks.

    χ² has 1 degree of freedom, no continuity correction; p from its upper tail. The
    odds ratio is infinite when arm 2 never passes where arm 1 fails, None when neither
    happens."""
    excess = variance = numerator = denominator = 0.0
    for a_passed, a_runs, b_passed, b_runs in strata:
        n = a_runs + b_runs
        if a_runs == 0 or b_runs == 0 or n < 2:
            continue
        passed = a_passed + b_passed
        failed = n - passed
        excess += a_passed - a_runs * passed / n
        variance += a_runs * b_runs * passed * failed / (n * n * (n - 1))
        numerator += a_passed * (b_runs - b_passed) / n
        denominator += (a_runs - a_passed) * b_passed / n
    if variance == 0:
        return 0.0, 1.0, None
    chi2 = excess * excess / variance
    p = erfc(sqrt(chi2 / 2))
    if denominator:
        odds: float | None = numerator / denominator
    else:
        odds = float("inf") if numerator else None
    return chi2, p, odds


def sign_flip(
    differences: Sequence[float], *, draws: int = 20_000, seed: int = 0
) -> tuple[float, bool]:
    """(two-sided p, exact?) of the task-paired permutation test that the mean of
    ``differences`` (one per task) is 0: each task's sign flipped at random."""
    values = [d for d in differences if d != 0]
    if not values:
        return 1.0, True
    observed = abs(sum(values))
    tolerance = 1e-9 * max(1.0, observed)
    if len(values) <= 16:
        hits = sum(
            1
            for signs in itertools.product((1, -1), repeat=len(values))
            if abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed - tolerance
        )
        return hits / 2 ** len(values), True
    rng = random.Random(seed)
    hits = sum(
        1
        for _ in range(draws)
        if abs(sum(v if rng.random() < 0.5 else -v for v in values)) >= observed - tolerance
    )
    return (hits + 1) / (draws + 1), False


def task_bootstrap(
    first: Mapping[str, Sequence[float]],
    second: Mapping[str, Sequence[float]],
    *,
    statistic: Callable[[Sequence[float]], float] = mean,
    resamples: int = 2_000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """(estimate, low, high): the mean over tasks of ``statistic(second) -
    statistic(first)`` per task, and its percentile interval over ``resamples`` task
    resamples (with replacement; runs stay with their task). Tasks in both only."""
    tasks = sorted(set(first) & set(second))
    if not tasks:
        return 0.0, 0.0, 0.0
    per_task = [statistic(second[t]) - statistic(first[t]) for t in tasks]
    estimate = mean(per_task)
    rng = random.Random(seed)
    means = sorted(mean(rng.choices(per_task, k=len(per_task))) for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[round(tail * (resamples - 1))]
    high = means[round((1 - tail) * (resamples - 1))]
    return estimate, low, high


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (compare each with alpha): the k-th smallest is
    multiplied by (m - k + 1), then made monotone and capped at 1."""
    ordered = sorted(pvalues.items(), key=lambda item: item[1])
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for k, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - k) * p))
        adjusted[name] = running
    return adjusted
