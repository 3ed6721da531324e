"""The power of the decision-point study's primary test, by simulation (pure Python).

``python -m experiment.decision_points.power [--items 60 --samples 10 --odds 1.8]``

Heterogeneity: each item's baseline success has a logit drawn from N(mu, sigma); mu and
sigma are fitted by maximum likelihood (a grid, Gauss-Hermite quadrature) to the
per-task passes of arm A in the 510-run confirmatory experiment
(``docs/experiment/confirmatory/runs.jsonl``: 34 tasks x 5 runs) — the heterogeneity
observed on this model. The treatment multiplies every item's odds by ``odds``. Each
simulated study draws ``samples`` completions per item and arm and applies the
pre-registered test (the exact test stratified by item) at alpha 0.05/3 (Holm's
smallest threshold over three hypotheses: the conservative bound).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from collections import defaultdict
from pathlib import Path

from experiment.stats import exact_stratified

__all__ = ["fit", "power"]

# Gauss-Hermite nodes and weights (20 points) for E[f(Z)], Z ~ N(0, 1), computed once.
_NODES: list[tuple[float, float]] = []


def _hermite() -> list[tuple[float, float]]:
    if _NODES:
        return _NODES
    # Golub-Welsch would need numpy; a dense grid on [-6, 6] is exact enough here.
    step = 0.05
    points = [-6 + step * i for i in range(int(12 / step) + 1)]
    weights = [math.exp(-z * z / 2) * step / math.sqrt(2 * math.pi) for z in points]
    _NODES.extend(zip(points, weights, strict=True))
    return _NODES


def _likelihood(passes: list[int], runs: int, mu: float, sigma: float) -> float:
    total = 0.0
    for k in passes:
        p_k = 0.0
        for z, w in _hermite():
            p = 1 / (1 + math.exp(-(mu + sigma * z)))
            p_k += w * math.comb(runs, k) * p**k * (1 - p) ** (runs - k)
        total += math.log(max(p_k, 1e-300))
    return total


def fit(passes: list[int], runs: int) -> tuple[float, float]:
    """(mu, sigma) of the logit-normal that best explains ``passes`` out of ``runs``."""
    best = (-math.inf, 0.0, 0.0)
    for i in range(-60, 21):
        for j in range(1, 41):
            mu, sigma = i / 10, j / 10
            value = _likelihood(passes, runs, mu, sigma)
            if value > best[0]:
                best = (value, mu, sigma)
    return best[1], best[2]


def power(
    *,
    items: int,
    samples: int,
    odds: float,
    mu: float,
    sigma: float,
    alpha: float = 0.05 / 3,
    studies: int = 400,
    seed: int = 0,
) -> float:
    rng = random.Random(seed)
    hits = 0
    for _ in range(studies):
        strata = []
        for _ in range(items):
            logit = rng.gauss(mu, sigma)
            base = 1 / (1 + math.exp(-logit))
            treated = 1 / (1 + math.exp(-(logit + math.log(odds))))
            a = sum(rng.random() < treated for _ in range(samples))
            b = sum(rng.random() < base for _ in range(samples))
            strata.append((a, samples, b, samples))
        hits += exact_stratified(strata) < alpha
    return hits / studies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--odds", type=float, nargs="+", default=[1.5, 1.8, 2.0, 2.5])
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument(
        "--runs", type=Path, default=Path("docs/experiment/confirmatory/runs.jsonl")
    )
    options = parser.parse_args()
    per_task: dict[str, list[bool]] = defaultdict(list)
    for line in options.runs.read_text().splitlines():
        run = json.loads(line)
        if run["interface"] == "A":
            per_task[run["task"]].append(bool(run["success"]))
    runs = len(next(iter(per_task.values())))
    mu, sigma = fit([sum(v) for v in per_task.values()], runs)
    base = sum(w / (1 + math.exp(-(mu + sigma * z))) for z, w in _hermite())
    print(
        f"A's tasks in the confirmatory run: logit-normal mu {mu:.1f}, sigma {sigma:.1f} "
        f"(mean success {base:.3f})"
    )
    for odds in options.odds:
        found = power(
            items=options.items,
            samples=options.samples,
            odds=odds,
            mu=mu,
            sigma=sigma,
            studies=options.studies,
        )
        print(f"{options.items} items x {options.samples} samples, OR {odds}: power {found:.2f}")


if __name__ == "__main__":
    main()
