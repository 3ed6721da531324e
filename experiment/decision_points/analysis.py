"""The pre-registered analysis of the decision-point study — only of a complete run.

:func:`analyse` refuses (:class:`~experiment.report.IncompleteRun`) unless every planned
completion is in the journal: the plan allows no interim analysis. Then, per hypothesis
(H1 B vs A, H2 B-focus vs A, H3 B vs B-wrong; correct answers), the conditional exact
test stratified by item (:func:`experiment.stats.exact_stratified`), the
Mantel-Haenszel odds ratio, the difference in points with a percentile interval from
resampling *tasks* (items stay with their task), and Holm's adjustment over the three;
beside them the sensitivity analysis, a logistic GLMM with the arm as fixed effect and
an item random intercept, its Wald test per hypothesis
(:mod:`~experiment.decision_points.glmm`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from experiment.decision_points.arms import ARMS
from experiment.decision_points.glmm import fit_glmm, wald
from experiment.report import IncompleteRun
from experiment.stats import Stratum, cmh, exact_stratified, holm, task_bootstrap

__all__ = ["HYPOTHESES", "analyse", "strata"]

HYPOTHESES = (("H1", "B", "A"), ("H2", "B-focus", "A"), ("H3", "B", "B-wrong"))


def strata(records: list[dict[str, Any]], treatment: str, baseline: str) -> list[Stratum]:
    """Per item: (correct on treatment, its completions, correct on baseline, its)."""
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for record in records:
        cell = cells[record["item"]]
        correct = int(bool(record["score"]["correct"]))
        if record["arm"] == treatment:
            cell[0] += correct
            cell[1] += 1
        elif record["arm"] == baseline:
            cell[2] += correct
            cell[3] += 1
    return [(a, b, c, d) for a, b, c, d in (cells[k] for k in sorted(cells))]


def analyse(
    records: list[dict[str, Any]], planned: int, items: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    if len({(r["item"], r["arm"], r["sample"]) for r in records}) < planned:
        raise IncompleteRun(
            f"{len(records)} of {planned} planned completions: no analysis before the run "
            "is complete."
        )
    found: dict[str, Any] = {}
    for name, treatment, baseline in HYPOTHESES:
        table = strata(records, treatment, baseline)
        chi2, p_cmh, odds = cmh(table)
        per_task: dict[str, dict[str, list[float]]] = {treatment: {}, baseline: {}}
        for record in records:
            if record["arm"] in per_task:
                task = items[record["item"]]["task"]
                value = float(bool(record["score"]["correct"]))
                per_task[record["arm"]].setdefault(task, []).append(value)
        estimate, low, high = task_bootstrap(per_task[baseline], per_task[treatment])
        found[name] = {
            "treatment": treatment,
            "baseline": baseline,
            "exactP": exact_stratified(table),
            "cmhChi2": chi2,
            "cmhP": p_cmh,
            "oddsRatio": odds,
            "differencePoints": 100 * estimate,
            "bootstrap95": [100 * low, 100 * high],
        }
    adjusted = holm({name: found[name]["exactP"] for name in found})
    model = fit_glmm(records, ARMS)
    for name in found:
        found[name]["holmP"] = adjusted[name]
        found[name]["glmm"] = wald(model, found[name]["treatment"], found[name]["baseline"])
    found["glmm"] = {key: model[key] for key in ("alpha", "sigma", "beta", "logLik")}
    return found
