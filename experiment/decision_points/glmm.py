"""The sensitivity analysis of the decision-point study: a logistic GLMM with the arm as
fixed effect and a random intercept per item, fitted by maximum likelihood.

    logit P(correct | item i, arm a) = alpha + beta_a + sigma * z_i,   z_i ~ N(0, 1)

with beta of the baseline arm (A) 0. The likelihood integrates each item's intercept
over a fine grid of the standard normal (the trapezoid rule on [-8, 8], step 0.05:
exact to far below the optimizer's tolerance for these smooth integrands); the maximum
is found by Nelder-Mead from alpha = logit of the overall rate, beta = 0,
log sigma = 0, and the standard errors come from the inverse of the observed
information (a central-difference Hessian). Each hypothesis is tested by its Wald z
(two-sided): H1 beta_B, H2 beta_B-focus, H3 beta_B - beta_B-wrong. numpy only (a
dependency of matplotlib, which the report already needs); no scipy, no statsmodels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["fit_glmm", "wald"]


def _nelder_mead(
    function: Callable[[Any], float], start: Any, *, step: float = 0.5, iterations: int = 4000
) -> Any:
    import numpy as np

    n = len(start)
    simplex = [np.array(start, dtype=float)]
    for i in range(n):
        point = np.array(start, dtype=float)
        point[i] += step
        simplex.append(point)
    values = [function(p) for p in simplex]
    for _ in range(iterations):
        order = np.argsort(values)
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-10 and np.max(np.abs(simplex[-1] - simplex[0])) < 1e-7:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        value = function(reflected)
        if value < values[0]:
            expanded = centroid + 2 * (centroid - simplex[-1])
            expanded_value = function(expanded)
            if expanded_value < value:
                simplex[-1], values[-1] = expanded, expanded_value
            else:
                simplex[-1], values[-1] = reflected, value
        elif value < values[-2]:
            simplex[-1], values[-1] = reflected, value
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            contracted_value = function(contracted)
            if contracted_value < values[-1]:
                simplex[-1], values[-1] = contracted, contracted_value
            else:
                simplex = [simplex[0] + 0.5 * (p - simplex[0]) for p in simplex]
                values = [function(p) for p in simplex]
    return simplex[int(np.argmin(values))]


def fit_glmm(
    records: Sequence[Mapping[str, Any]], arms: Sequence[str], baseline: str = "A"
) -> dict[str, Any]:
    """Fit the model to ``records`` (``item``, ``arm``, ``score.correct``); returns
    ``{"alpha", "sigma", "beta": {arm: (estimate, se)}, "covariance", "logLik"}``."""
    import numpy as np

    items = sorted({str(r["item"]) for r in records})
    others = [arm for arm in arms if arm != baseline]
    columns = [baseline, *others]
    row = {item: i for i, item in enumerate(items)}
    column = {arm: j for j, arm in enumerate(columns)}
    passed = np.zeros((len(items), len(columns)))
    runs = np.zeros((len(items), len(columns)))
    for record in records:
        if record["arm"] not in column:
            continue
        i, j = row[str(record["item"])], column[record["arm"]]
        runs[i, j] += 1
        passed[i, j] += bool(record["score"]["correct"])
    z = np.arange(-8.0, 8.0 + 1e-9, 0.05)
    log_w = -z * z / 2 + math.log(0.05 / math.sqrt(2 * math.pi))

    def negative(theta: Any) -> float:
        alpha, betas, log_sigma = theta[0], np.concatenate([[0.0], theta[1:-1]]), theta[-1]
        eta = alpha + betas[None, None, :] + math.exp(log_sigma) * z[:, None, None]
        # log p = -log(1 + e^-eta), log (1 - p) = -log(1 + e^eta): stable for any eta.
        log_p, log_q = -np.logaddexp(0, -eta), -np.logaddexp(0, eta)
        per_node = (passed * log_p + (runs - passed) * log_q).sum(axis=2) + log_w[:, None]
        peak = per_node.max(axis=0)
        per_item = peak + np.log(np.exp(per_node - peak).sum(axis=0))
        return float(-per_item.sum())

    rate = min(max(passed.sum() / max(runs.sum(), 1), 1e-3), 1 - 1e-3)
    start = np.array([math.log(rate / (1 - rate)), *[0.0] * len(others), 0.0])
    theta = _nelder_mead(negative, start)
    theta = _nelder_mead(negative, theta, step=0.1)  # a restart: Nelder-Mead can stall
    size = len(theta)
    hessian = np.zeros((size, size))
    h = 1e-3
    for a in range(size):
        for b in range(size):
            shift_a, shift_b = np.eye(size)[a] * h, np.eye(size)[b] * h
            hessian[a, b] = (
                negative(theta + shift_a + shift_b)
                - negative(theta + shift_a - shift_b)
                - negative(theta - shift_a + shift_b)
                + negative(theta - shift_a - shift_b)
            ) / (4 * h * h)
    covariance = np.linalg.pinv(hessian)
    beta = {
        arm: (float(theta[1 + k]), float(math.sqrt(max(covariance[1 + k, 1 + k], 0.0))))
        for k, arm in enumerate(others)
    }
    return {
        "alpha": float(theta[0]),
        "sigma": math.exp(float(theta[-1])),
        "beta": beta,
        "arms": columns,
        "covariance": covariance.tolist(),
        "logLik": -negative(theta),
    }


def wald(fit: Mapping[str, Any], treatment: str, baseline: str) -> dict[str, float]:
    """The Wald test of ``treatment`` vs ``baseline`` (log odds ratio, its se, z, p)."""
    columns: list[str] = list(fit["arms"])
    covariance = fit["covariance"]
    # theta is (alpha, beta of columns[1:], log sigma): arm columns[k] is theta[k], k >= 1.
    contrast = [0.0] * len(covariance)
    for arm, sign in ((treatment, 1.0), (baseline, -1.0)):
        if arm != columns[0]:
            contrast[columns.index(arm)] += sign
    estimate = sum(contrast[k] * fit["beta"][arm][0] for k, arm in enumerate(columns) if k)
    variance = sum(
        contrast[a] * contrast[b] * covariance[a][b]
        for a in range(len(contrast))
        for b in range(len(contrast))
    )
    se = math.sqrt(max(variance, 0.0))
    statistic = estimate / se if se > 0 else 0.0
    return {
        "logOddsRatio": estimate,
        "se": se,
        "z": statistic,
        "p": math.erfc(abs(statistic) / math.sqrt(2)),
    }
