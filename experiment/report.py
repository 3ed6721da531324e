"""The report of an experiment: ``results.json``, ``report.md`` and ``chart.png``.

``report.md`` has one row per task x interface x agent (means over the repeats, success
as passed/runs), per arm (interface x agent) the success with its Wilson interval,
pass^k (tau-bench's estimator: for a task passed c times in n runs, C(c, k) / C(n, k),
averaged over tasks) and the refused writes by cause, for a model its tokens as its
server counted them (prompt, cached, tool schemas) and its repaired and unreadable
calls, and the pre-registered comparisons (docs/experiment/preregistration.md): B and
B-focus against A on success (an exact test stratified by task, with the
Cochran-Mantel-Haenszel χ² beside it) and on invalid writes per run (a task-paired
sign-flip permutation test), Holm-adjusted, each with a task-bootstrap interval
(:mod:`experiment.stats`). Runs the model's endpoint failed (``infrastructureError``)
are left out and counted.

An agent run under a perturbation (scrambled names, distractor tools) is its own arm:
``llm scrambled`` is reported beside ``llm``, never pooled with it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from math import comb
from pathlib import Path
from statistics import mean
from typing import Any

from experiment.stats import cmh, exact_stratified, holm, sign_flip, task_bootstrap, wilson

__all__ = [
    "PRIMARY",
    "SECONDARY",
    "aggregate",
    "arm_totals",
    "comparisons",
    "fisher_exact",
    "label",
    "model_totals",
    "pass_hat_k",
    "wilson",
    "write_report",
]

CAUSES = ("policy", "madeUpVersion", "addressing", "conflict")
# The pre-registered comparisons (treatment, baseline), and the exploratory ones.
PRIMARY = (("B", "A"), ("B-focus", "A"))
SECONDARY = (("B-compact", "A"), ("C", "A"), ("B-focus", "B"))

Key = tuple[str, str, str]


def label(run: dict[str, Any]) -> str:
    """The agent as reported: ``llm``, or ``llm scrambled`` under a perturbation."""
    condition = run.get("condition", "plain")
    return run["agent"] if condition == "plain" else f"{run['agent']} {condition}"


def _groups(runs: Iterable[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        groups[key(run)].append(run)
    return groups


def aggregate(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per task x interface x agent, in run order."""
    rows = []
    for (task, interface, agent), group in _groups(
        runs, lambda r: (r["task"], r["interface"], label(r))
    ).items():
        rows.append(
            {
                "task": task,
                "interface": interface,
                "agent": agent,
                "runs": len(group),
                "passed": sum(r["success"] for r in group),
                "invalidTransitions": mean(r["invalidTransitions"] for r in group),
                "calls": mean(r["calls"] for r in group),
                "reads": mean(r["reads"] for r in group),
                "schemaBytes": mean(r["contextBytes"]["schemas"] for r in group),
                "responseBytes": mean(r["contextBytes"]["responses"] for r in group),
                "schemaTokens": mean(r["contextTokens"]["schemas"] for r in group),
                "responseTokens": mean(r["contextTokens"]["responses"] for r in group),
                "staleConflicts": mean(r["staleConflicts"] for r in group),
                "staleRecovered": mean(r["staleRecovered"] for r in group),
                "leaks": mean(r["leaks"] for r in group),
                "latencyMs": mean(r["latencyMs"] for r in group),
            }
        )
    return _in_order(rows)


def pass_hat_k(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """``{"A/scripted": {"1": 0.9, "2": 0.85, …}}`` over the tasks run."""
    table: dict[str, dict[str, float]] = {}
    by_arm = _groups(runs, lambda r: f"{r['interface']}/{label(r)}")
    for arm, arm_runs in by_arm.items():
        per_task = _groups(arm_runs, lambda r: r["task"])
        n = min(len(group) for group in per_task.values())
        table[arm] = {
            str(k): round(
                mean(
                    comb(sum(r["success"] for r in g[:n]), k) / comb(n, k)
                    for g in per_task.values()
                ),
                3,
            )
            for k in range(1, n + 1)
        }
    rank = {interface: index for index, interface in enumerate(INTERFACE_LABELS)}
    return dict(sorted(table.items(), key=lambda item: rank.get(item[0].split("/")[0], len(rank))))


INTERFACE_LABELS = {
    "A": "A static",
    "B": "B hybrid",
    "B-compact": "B compact",
    "B-focus": "B focus",
    "C": "C forms",
}


def _in_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by interface as the seed names them (A, B, B-compact, C), then as they came:
    the run order is shuffled, the tables are not."""
    rank = {interface: index for index, interface in enumerate(INTERFACE_LABELS)}
    return sorted(rows, key=lambda row: rank.get(row["interface"], len(rank)))


def _sum(values: Iterable[Any]) -> float | None:
    """The sum of the counted values; None when none was counted (the server said nothing)."""
    counted = [value for value in values if isinstance(value, int | float)]
    return sum(counted) if counted else None


MODEL_AGENTS = ("llm", "oracle")


def model_totals(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per interface x LLM arm: what the model did and what its server counted."""
    rows = []
    llm = [r for r in runs if r["agent"] in MODEL_AGENTS]
    for (interface, arm), group in _groups(llm, lambda r: (r["interface"], label(r))).items():
        prompt = _sum(r.get("promptTokens") for r in group)
        cached = _sum(r.get("cachedPromptTokens") for r in group)
        schema = _sum(r.get("toolSchemaTokens") for r in group)
        passed = sum(r["success"] for r in group)
        low, high = wilson(passed, len(group))
        rows.append(
            {
                "interface": interface,
                "agent": arm,
                "runs": len(group),
                "passed": passed,
                "successLow": low,
                "successHigh": high,
                "invalidPerRun": mean(r["invalidTransitions"] for r in group),
                "turnsPerRun": mean(r.get("turns", 0) for r in group),
                "promptTokens": prompt,
                "cachedPromptTokens": cached,
                "completionTokens": _sum(r.get("completionTokens") for r in group),
                "toolSchemaTokens": schema,
                "cacheHitRate": cached / prompt if prompt and cached is not None else None,
                "toolSchemaShare": schema / prompt if prompt and schema is not None else None,
                "repairs": sum(r.get("repairs", 0) for r in group),
                "unparsedCalls": sum(r.get("unparsedCalls", 0) for r in group),
                "modelSeconds": sum(r.get("modelLatencyMs", 0) for r in group) / 1000,
            }
        )
    return _in_order(rows)


def fisher_exact(a_passed: int, a_runs: int, b_passed: int, b_runs: int) -> float:
    """Two-sided p of Fisher's exact test on a 2x2 table of passed/failed runs: the
    probability, with the margins fixed, of a table at most as likely as the one seen."""
    passed, total = a_passed + b_passed, a_runs + b_runs

    def probability(x: int) -> float:
        return comb(a_runs, x) * comb(b_runs, passed - x) / comb(total, passed)

    seen = probability(a_passed)
    low, high = max(0, passed - b_runs), min(a_runs, passed)
    p = sum(probability(x) for x in range(low, high + 1) if probability(x) <= seen * (1 + 1e-9))
    return min(1.0, p)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def model_table(rows: list[dict[str, Any]], hat: dict[str, dict[str, float]]) -> str:
    head = (
        "| if | agent | success (95% CI) | pass^1 | pass^n | invalid / run | turns / run "
        "| prompt tok | cached tok | cache hit | tool-schema tok | schema share "
        "| completion tok | repairs | unreadable | model s |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = []
    for r in rows:
        ks = hat.get(f"{r['interface']}/{r['agent']}", {})
        last = ks[max(ks, key=int)] if ks else None
        lines.append(
            f"| {r['interface']} | {r['agent']} | {r['passed']}/{r['runs']} "
            f"({r['successLow']:.0%}-{r['successHigh']:.0%}) "
            f"| {ks.get('1', 0):.2f} | {'n/a' if last is None else f'{last:.2f}'} "
            f"| {r['invalidPerRun']:.2f} | {r['turnsPerRun']:.1f} "
            f"| {_count(r['promptTokens'])} | {_count(r['cachedPromptTokens'])} "
            f"| {_percent(r['cacheHitRate'])} | {_count(r['toolSchemaTokens'])} "
            f"| {_percent(r['toolSchemaShare'])} | {_count(r['completionTokens'])} "
            f"| {r['repairs']} | {r['unparsedCalls']} | {r['modelSeconds']:.0f} |"
        )
    return head + "\n".join(lines) + "\n"


def _refused(run: dict[str, Any]) -> dict[str, int]:
    """A run's refused writes by cause; runs from before the split have only totals."""
    causes = run.get("refusedWrites")
    if isinstance(causes, dict):
        return {cause: int(causes.get(cause, 0)) for cause in CAUSES}
    return {
        "policy": run.get("invalidTransitions", 0),
        "madeUpVersion": 0,
        "addressing": 0,
        "conflict": run.get("staleConflicts", 0),
    }


def arm_totals(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per arm (interface x agent): success with its Wilson interval, pass^k, refused
    writes by cause (per run), conflicts recovered, and the model's figures."""
    hat = pass_hat_k(runs)
    rows = []
    for (interface, arm), group in _groups(runs, lambda r: (r["interface"], label(r))).items():
        passed = sum(r["success"] for r in group)
        low, high = wilson(passed, len(group))
        causes = {cause: sum(_refused(r)[cause] for r in group) for cause in CAUSES}
        ks = hat.get(f"{interface}/{arm}", {})
        prompt = _sum(r.get("promptTokens") for r in group)
        schema = _sum(r.get("toolSchemaTokens") for r in group)
        rows.append(
            {
                "interface": interface,
                "agent": arm,
                "runs": len(group),
                "tasks": len({r["task"] for r in group}),
                "passed": passed,
                "successLow": low,
                "successHigh": high,
                "passHat1": ks.get("1"),
                "passHatN": ks[max(ks, key=int)] if ks else None,
                "refusedWrites": causes,
                "invalidPerRun": (causes["policy"] + causes["madeUpVersion"] + causes["addressing"])
                / len(group),
                "staleRecovered": sum(r.get("staleRecovered", 0) for r in group),
                "unparsedCalls": sum(r.get("unparsedCalls", 0) for r in group),
                "promptTokens": prompt,
                "toolSchemaShare": schema / prompt if prompt and schema is not None else None,
            }
        )
    return _in_order(rows)


def arms_table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| if | agent | tasks | success (95% CI) | pass^1 | pass^n | invalid / run "
        "| policy | made-up version | addressing | conflict (recovered) | unreadable "
        "| prompt tok | schema share |\n"
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"
    )

    def hat(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    lines = [
        f"| {r['interface']} | {r['agent']} | {r['tasks']} | {r['passed']}/{r['runs']} "
        f"({r['successLow']:.0%}-{r['successHigh']:.0%}) | {hat(r['passHat1'])} "
        f"| {hat(r['passHatN'])} | {r['invalidPerRun']:.2f} "
        f"| {r['refusedWrites']['policy']} | {r['refusedWrites']['madeUpVersion']} "
        f"| {r['refusedWrites']['addressing']} "
        f"| {r['refusedWrites']['conflict']} ({r['staleRecovered']}) | {r['unparsedCalls']} "
        f"| {_count(r['promptTokens'])} | {_percent(r['toolSchemaShare'])} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def _invalid(run: dict[str, Any]) -> int:
    causes = _refused(run)
    return causes["policy"] + causes["madeUpVersion"] + causes["addressing"]


def compare(
    runs: list[dict[str, Any]], treatment: str, baseline: str, *, seed: int = 0
) -> dict[str, Any] | None:
    """``treatment`` against ``baseline`` over the tasks both ran: success (exact test
    stratified by task, CMH, task bootstrap of the difference in rate) and invalid
    writes per run (task-paired sign-flip test, task bootstrap of the difference)."""
    by_arm = _groups(runs, lambda r: r["interface"])
    if treatment not in by_arm or baseline not in by_arm:
        return None
    first = _groups(by_arm[baseline], lambda r: r["task"])
    second = _groups(by_arm[treatment], lambda r: r["task"])
    tasks = sorted(set(first) & set(second))
    if not tasks:
        return None
    strata = [
        (
            sum(r["success"] for r in second[t]),
            len(second[t]),
            sum(r["success"] for r in first[t]),
            len(first[t]),
        )
        for t in tasks
    ]
    chi2, p_cmh, odds = cmh(strata)
    success_first = {t: [float(r["success"]) for r in first[t]] for t in tasks}
    success_second = {t: [float(r["success"]) for r in second[t]] for t in tasks}
    invalid_first = {t: [float(_invalid(r)) for r in first[t]] for t in tasks}
    invalid_second = {t: [float(_invalid(r)) for r in second[t]] for t in tasks}
    invalid_p, exact = sign_flip(
        [mean(invalid_second[t]) - mean(invalid_first[t]) for t in tasks], seed=seed
    )
    return {
        "treatment": treatment,
        "baseline": baseline,
        "tasks": len(tasks),
        "success": {
            "treatment": [sum(st[0] for st in strata), sum(st[1] for st in strata)],
            "baseline": [sum(st[2] for st in strata), sum(st[3] for st in strata)],
            "difference": task_bootstrap(success_first, success_second, seed=seed),
            "exactP": exact_stratified(strata),
            "cmhChi2": chi2,
            "cmhP": p_cmh,
            "mhOddsRatio": odds,
        },
        "invalid": {
            "treatmentPerRun": mean(v for t in tasks for v in invalid_second[t]),
            "baselinePerRun": mean(v for t in tasks for v in invalid_first[t]),
            "difference": task_bootstrap(invalid_first, invalid_second, seed=seed),
            "permutationP": invalid_p,
            "exact": exact,
        },
    }


def comparisons(runs: list[dict[str, Any]], *, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per agent: the pre-registered comparisons (:data:`PRIMARY`, Holm-adjusted as one
    family of four hypotheses — success and invalid writes, B and B-focus against A —
    over those present) and the exploratory ones (:data:`SECONDARY`, unadjusted)."""
    result: dict[str, dict[str, Any]] = {}
    for agent, group in _groups(runs, label).items():
        primary = [c for t, b in PRIMARY if (c := compare(group, t, b, seed=seed))]
        secondary = [c for t, b in SECONDARY if (c := compare(group, t, b, seed=seed))]
        if not primary and not secondary:
            continue
        family = {}
        for c in primary:
            family[f"success {c['treatment']} vs {c['baseline']}"] = c["success"]["exactP"]
            family[f"invalid {c['treatment']} vs {c['baseline']}"] = c["invalid"]["permutationP"]
        adjusted = holm(family)
        for c in primary:
            c["success"]["holmP"] = adjusted[f"success {c['treatment']} vs {c['baseline']}"]
            c["invalid"]["holmP"] = adjusted[f"invalid {c['treatment']} vs {c['baseline']}"]
        result[agent] = {"primary": primary, "secondary": secondary}
    return result


def _verdict(p: float, alpha: float = 0.05) -> str:
    return "beyond noise" if p < alpha else "within noise"


def comparisons_text(found: dict[str, dict[str, Any]]) -> str:
    if not found:
        return ""
    parts = [
        "Success: the exact conditional test stratified by task (Fisher's test summed "
        "over tasks with every task's margins fixed), the Cochran-Mantel-Haenszel χ² "
        "and the Mantel-Haenszel odds ratio beside it; the difference is the mean over "
        "tasks of the difference in success rate. Invalid writes (policy + made-up "
        "version + addressing refusals) per run: the task-paired sign-flip permutation "
        "test. Intervals: 95% percentile, 2,000 task resamples. Holm's adjustment over "
        "the pre-registered family (B and B-focus against A, on both measures); the "
        "secondary comparisons are exploratory and unadjusted. Within noise is not "
        "evidence of equality.\n"
    ]
    for agent, found_for in found.items():
        rows = []
        for kind, items in (
            ("primary", found_for["primary"]),
            ("secondary", found_for["secondary"]),
        ):
            for c in items:
                s, i = c["success"], c["invalid"]
                d, low, high = s["difference"]
                odds = (
                    "n/a"
                    if s["mhOddsRatio"] is None
                    else "∞"
                    if s["mhOddsRatio"] == float("inf")
                    else f"{s['mhOddsRatio']:.2f}"
                )
                holm_p = f"{s['holmP']:.3f}" if "holmP" in s else "-"
                rows.append(
                    f"| {kind} | success {c['treatment']} vs {c['baseline']} | {c['tasks']} "
                    f"| {s['treatment'][0]}/{s['treatment'][1]} vs "
                    f"{s['baseline'][0]}/{s['baseline'][1]} "
                    f"| {d:+.3f} ({low:+.3f} to {high:+.3f}) "
                    f"| exact p = {s['exactP']:.3f}; CMH χ² = {s['cmhChi2']:.2f}, "
                    f"p = {s['cmhP']:.3f}; MH OR = {odds} | {holm_p} "
                    f"| {_verdict(s.get('holmP', s['exactP']))} |"
                )
                d, low, high = i["difference"]
                holm_p = f"{i['holmP']:.3f}" if "holmP" in i else "-"
                how = "exact" if i["exact"] else "20,000 draws"
                rows.append(
                    f"| {kind} | invalid {c['treatment']} vs {c['baseline']} | {c['tasks']} "
                    f"| {i['treatmentPerRun']:.2f} vs {i['baselinePerRun']:.2f} / run "
                    f"| {d:+.3f} ({low:+.3f} to {high:+.3f}) "
                    f"| sign-flip p = {i['permutationP']:.3f} ({how}) | {holm_p} "
                    f"| {_verdict(i.get('holmP', i['permutationP']))} |"
                )
        parts.append(
            f"**{agent}**\n\n"
            "| family | hypothesis | tasks | observed | difference (95% CI) | test "
            "| Holm p | at 0.05 |\n|---|---|---:|---|---|---|---:|---|\n" + "\n".join(rows) + "\n"
        )
    return "\n".join(parts)


def _provenance(meta: dict[str, Any]) -> str:
    facts = meta.get("provenance")
    if not facts:
        return ""
    mixed = [key for key, values in facts.items() if len(values) > 1]
    said = "; ".join(f"{key} {', '.join(values)}" for key, values in facts.items())
    warning = f" **Mixed: {', '.join(mixed)}.**" if mixed else ""
    return f"Runs made with: {said}.{warning}\n"


def success_context_chart(runs: list[dict[str, Any]], path: Path) -> None:
    """Success rate against the prompt tokens of a run (LLM arms; scripted: context
    tokens), one point per interface x agent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.5, 4.2))
    for (interface, arm), group in _groups(runs, lambda r: (r["interface"], label(r))).items():
        if group[0]["agent"] == "llm":
            sizes = [r.get("promptTokens") or 0 for r in group]
        else:
            sizes = [r["contextTokens"]["schemas"] + r["contextTokens"]["responses"] for r in group]
        rate = sum(r["success"] for r in group) / len(group)
        x = mean(sizes) / 1000
        marker = "o" if group[0]["agent"] == "llm" else "s"
        axis.scatter([x], [rate], marker=marker, s=60)
        axis.annotate(f"{interface} {arm}", (x, rate), fontsize=8, xytext=(4, 4),
                      textcoords="offset points")  # fmt: skip
    axis.set_xlabel("thousand tokens per run (LLM: prompt tokens over all turns)")
    axis.set_ylabel("runs passed")
    axis.set_ylim(-0.05, 1.05)
    axis.grid(alpha=0.3)
    axis.set_title("Success vs context", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def markdown_table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| task | if | agent | success | invalid | calls | reads | schema bytes | response bytes "
        "| schema tok | response tok | stale (recovered) | leaks | latency ms |\n"
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n"
    )
    lines = [
        f"| {r['task']} | {r['interface']} | {r['agent']} | {r['passed']}/{r['runs']} "
        f"| {_number(r['invalidTransitions'])} | {_number(r['calls'])} | {_number(r['reads'])} "
        f"| {_number(r['schemaBytes'])} | {_number(r['responseBytes'])} "
        f"| {_number(r['schemaTokens'])} | {_number(r['responseTokens'])} "
        f"| {_number(r['staleConflicts'])} ({_number(r['staleRecovered'])}) "
        f"| {_number(r['leaks'])} | {_number(r['latencyMs'])} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def _success(row: dict[str, Any]) -> str:
    if row["runs"] == 1:
        return "yes" if row["passed"] else "**no**"
    return f"{row['passed']}/{row['runs']}"


def compact_table(rows: list[dict[str, Any]], agent: str) -> str:
    """One row per task, the interfaces side by side (``A / B / C``), for one agent."""
    interfaces = sorted({r["interface"] for r in rows if r["agent"] == agent})
    by_task: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        if row["agent"] == agent:
            by_task[row["task"]][row["interface"]] = row

    def cells(task: dict[str, dict[str, Any]], value: Any) -> str:
        return " / ".join(value(task[i]) if i in task else "-" for i in interfaces)

    columns = (
        ("success", _success),
        ("invalid", lambda r: _number(r["invalidTransitions"])),
        ("calls (reads)", lambda r: f"{_number(r['calls'])} ({_number(r['reads'])})"),
        (
            "context kB",
            lambda r: f"{(r['schemaBytes'] + r['responseBytes']) / 1000:.1f}",
        ),
        (
            "stale (recovered)",
            lambda r: f"{_number(r['staleConflicts'])} ({_number(r['staleRecovered'])})",
        ),
        ("leaks", lambda r: _number(r["leaks"])),
    )
    label = " / ".join(interfaces)
    head = "| task | " + " | ".join(f"{name} {label}" for name, _ in columns) + " |\n"
    head += "|---|" + "---|" * len(columns) + "\n"
    lines = [
        f"| {task} | " + " | ".join(cells(arms, value) for _, value in columns) + " |"
        for task, arms in by_task.items()
    ]
    return head + "\n".join(lines) + "\n"


def totals(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per interface x agent: runs passed and the sums over every run."""
    rows = []
    for (interface, agent), group in _groups(runs, lambda r: (r["interface"], label(r))).items():
        rows.append(
            {
                "interface": interface,
                "agent": agent,
                "runs": len(group),
                "passed": sum(r["success"] for r in group),
                "invalidTransitions": sum(r["invalidTransitions"] for r in group),
                "calls": sum(r["calls"] for r in group),
                "reads": sum(r["reads"] for r in group),
                "schemaBytes": sum(r["contextBytes"]["schemas"] for r in group),
                "responseBytes": sum(r["contextBytes"]["responses"] for r in group),
                "contextTokens": sum(
                    r["contextTokens"]["schemas"] + r["contextTokens"]["responses"] for r in group
                ),
                "staleConflicts": sum(r["staleConflicts"] for r in group),
                "staleRecovered": sum(r["staleRecovered"] for r in group),
                "leaks": sum(r["leaks"] for r in group),
            }
        )
    return _in_order(rows)


def _totals_table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| if | agent | passed | invalid | calls | reads | schema bytes (all runs) "
        "| response bytes | context tokens | stale (recovered) | leaks |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|\n"
    )
    lines = [
        f"| {r['interface']} | {r['agent']} | {r['passed']}/{r['runs']} "
        f"| {r['invalidTransitions']} | {r['calls']} | {r['reads']} | {r['schemaBytes']} "
        f"| {r['responseBytes']} | {r['contextTokens']} "
        f"| {r['staleConflicts']} ({r['staleRecovered']}) | {r['leaks']} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def chart(runs: list[dict[str, Any]], path: Path) -> None:
    """Invalid transitions, calls and context bytes per interface (summed over tasks)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = totals(runs)
    interfaces = sorted({r["interface"] for r in rows})
    agents = sorted({r["agent"] for r in rows})
    index = {(r["interface"], r["agent"]): r for r in rows}
    figure, axes = plt.subplots(1, 3, figsize=(12, 4))
    width = 0.8 / len(agents)
    panels = (
        ("Invalid transitions attempted", lambda r: (r["invalidTransitions"], 0)),
        (
            "Tool calls (solid: writes, hatched: reads)",
            lambda r: (r["calls"] - r["reads"], r["reads"]),
        ),
        (
            "Context kB (solid: tool schemas, hatched: results)",
            lambda r: (r["schemaBytes"] / 1000, r["responseBytes"] / 1000),
        ),
    )
    colors = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
    for axis, (title, values) in zip(axes, panels, strict=True):
        for a, agent in enumerate(agents):
            xs, lower, upper = [], [], []
            for i, interface in enumerate(interfaces):
                row = index.get((interface, agent))
                if row is None:
                    continue
                first, second = values(row)
                xs.append(i + a * width - 0.4 + width / 2)
                lower.append(first)
                upper.append(second)
            color = colors[a % len(colors)]
            axis.bar(xs, lower, width, label=agent, color=color)
            if any(upper):
                axis.bar(xs, upper, width, bottom=lower, color=color, alpha=0.45, hatch="//")
        axis.set_title(title, fontsize=10)
        axis.set_xticks(range(len(interfaces)))
        axis.set_xticklabels([INTERFACE_LABELS.get(i, i) for i in interfaces], fontsize=8)
        axis.grid(axis="y", alpha=0.3)
    if len(agents) > 1:
        axes[0].legend(fontsize=8)
    tasks = {r["task"] for r in runs}
    repeats = len({r["repeat"] for r in runs})
    figure.suptitle(
        f"Sums over {len(tasks)} tasks x {repeats} run(s) per interface and agent", fontsize=10
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def _model_meta(llm: dict[str, Any]) -> str:
    facts = [
        f"model `{llm.get('model')}`" + (f" ({llm['title']})" if llm.get("title") else ""),
        *([f"sha256 `{llm['sha256']}`"] if llm.get("sha256") else []),
        *([f"server `{llm['server']}`"] if llm.get("server") else []),
        *([f"context {llm['contextTokens']} tokens"] if llm.get("contextTokens") else []),
        f"temperature {llm.get('temperature')}",
        f"max tokens {llm.get('maxTokens')}",
        f"max steps {llm.get('maxSteps')}",
    ]
    return (
        "; ".join(facts) + ". Tokens as the model's server counted them; cache hit = cached "
        "/ prompt tokens; schema share = tokens of the tool definitions sent (by the "
        "server's /tokenize) / prompt tokens; repairs = tool calls taken from the text of "
        "an answer.\n"
    )


def _pass_hat_table(hat: dict[str, dict[str, float]]) -> str:
    ks = sorted({int(k) for values in hat.values() for k in values})
    head = "| arm | " + " | ".join(f"k={k}" for k in ks) + " |\n|---|" + "---:|" * len(ks)
    lines = [
        f"| {arm} | "
        + " | ".join(f"{values[str(k)]:.2f}" if str(k) in values else "n/a" for k in ks)
        + " |"
        for arm, values in hat.items()
    ]
    return head + "\n" + "\n".join(lines) + "\n"


class IncompleteRun(ValueError):
    """The run is not complete: no report, no pre-registered test (the plan allows no
    interim analysis; ``--resume`` finishes the run)."""


DEVIATIONS_FILE = "deviations.md"


def deviations(results: dict[str, Any], out: Path) -> str:
    """The report's deviations from the plan: what the runs themselves show (more than
    one commit, code, seed, threads or host wording; a server that asked for
    confirmations; runs left out) and what the
    experimenter wrote in ``OUT/deviations.md``; "None" when there is neither."""
    meta = results["meta"]
    found = [
        f"- The runs were made with more than one {key}: {', '.join(values)}."
        for key, values in (meta.get("provenance") or {}).items()
        if len(values) > 1
    ]
    # "None": runs from before confirmations existed (nothing to ask then).
    confirmations = (meta.get("provenance") or {}).get("confirmations") or []
    asked = set(confirmations) - {"False", "None"}
    if asked:
        found.append(
            "- The server asked for confirmations in some runs (the plan has it ask for none: "
            'AFFORDANCES["CONFIRMATIONS"] False).'
        )
    excluded = [r for r in results["runs"] if r.get("infrastructureError")]
    if excluded:
        found.append(
            f"- {len(excluded)} run(s) left out: the model's endpoint failed "
            "(infrastructure errors, the only exclusion the plan allows)."
        )
    written = out / DEVIATIONS_FILE
    if written.exists() and written.read_text().strip():
        found.append(written.read_text().strip())
    body = "\n".join(found) if found else "None recorded."
    return f"## Deviations from the plan\n\n{body}\n"


def write_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    """``results.json``, ``report.md`` and the charts of a complete run; IncompleteRun
    for a run cut short (no report, no test before the planned runs are all done)."""
    meta = results["meta"]
    if meta.get("complete") is False:
        raise IncompleteRun(
            f"{len(results['runs'])} of {meta.get('plannedRuns', '?')} planned runs: no report "
            "and no pre-registered test before the run is complete (--resume finishes it)."
        )
    out.mkdir(parents=True, exist_ok=True)
    # A run the model's endpoint failed says nothing about an interface: left out.
    excluded = [r for r in results["runs"] if r.get("infrastructureError")]
    runs = [r for r in results["runs"] if not r.get("infrastructureError")]
    task_rank = {task: index for index, task in enumerate(results["meta"].get("tasks", {}))}
    summary = sorted(aggregate(runs), key=lambda row: task_rank.get(row["task"], len(task_rank)))
    seed = results["meta"].get("seed", 0)
    results = {
        **results,
        "summary": summary,
        "totals": totals(runs),
        "arms": arm_totals(runs),
        "passHatK": pass_hat_k(runs),
        "comparisons": comparisons(runs, seed=seed),
        "excludedRuns": len(excluded),
    }
    model = model_totals(runs)
    if model:
        results["model"] = model
    paths = {
        "json": out / "results.json",
        "markdown": out / "report.md",
        "chart": out / "chart.png",
        "context": out / "success_context.png",
    }
    paths["json"].write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    chart(runs, paths["chart"])
    success_context_chart(runs, paths["context"])
    meta = results["meta"]
    parts = [
        "# Experiment report\n",
        f"Interfaces {', '.join(f'{k} ({v})' for k, v in meta['interfaces'].items())}; "
        f"agents {', '.join(meta['agents'])}; conditions "
        f"{', '.join(meta.get('conditions', ['plain']))}; {meta['repeat']} run(s) each; seed "
        f"{meta.get('seed', 0)}; protocol mode `{meta['protocol']}`; tokens: "
        f"{meta['tokenizer']}; wall time {meta['wallSeconds']} s"
        + (
            f" in this session, {meta['runSeconds']:.1f} s in runs over every session "
            f"({meta['resumedRuns']} runs from earlier ones)"
            if meta.get("resumedRuns")
            else ""
        )
        + ".\n",
        _provenance(meta),
        deviations(results, out),
        *(
            [
                f"{len(excluded)} run(s) left out: the model's endpoint failed "
                "(`infrastructureError`; `--resume` does them again).\n"
            ]
            if excluded
            else []
        ),
        "## Arms\n",
        "Success with its 95% Wilson interval; pass^k as τ-bench estimates it; refused "
        "writes by cause (policy: the rules refused it; made-up version: stale_version "
        "with no real change behind it; addressing: no such tool, object or URL; "
        "conflict: another user really changed the object) — invalid = all but "
        "conflicts; unreadable: answers that tried to be a call and could not be read.\n",
        arms_table(results["arms"]),
        *(
            ["## Pre-registered comparisons\n", comparisons_text(results["comparisons"])]
            if results["comparisons"]
            else []
        ),
        *(
            f"## By task, {agent} agent\n\n{compact_table(results['summary'], agent)}"
            for agent in dict.fromkeys(row["agent"] for row in results["summary"])
        ),
        *(
            [
                "## The model, per interface\n",
                _model_meta(meta["llm"])
                if meta.get("llm")
                else "The oracle's token counts are stand-ins (request bytes / 4).\n",
                model_table(model, results["passHatK"]),
            ]
            if model
            else []
        ),
        "## Totals per interface\n",
        _totals_table(results["totals"]),
        "## Runs (means over repeats)\n",
        markdown_table(results["summary"]),
    ]
    if results["passHatK"]:
        parts.append("## pass^k\n")
        parts.append(_pass_hat_table(results["passHatK"]))
    failed = [r for r in runs if not r["success"]]
    if failed:
        parts.append("## Failed runs\n")
        parts.append(
            "\n".join(
                f"- {r['task']} {r['interface']} {label(r)} #{r['repeat']}: "
                + "; ".join(r["failures"])
                for r in failed
            )
            + "\n"
        )
    parts.append("## Tasks\n")
    parts.append("\n".join(f"- **{k}** {v}" for k, v in meta["tasks"].items()) + "\n")
    parts.append(f"\n![chart]({paths['chart'].name})\n")
    parts.append(f"\n![success vs context]({paths['context'].name})\n")
    paths["markdown"].write_text("\n".join(parts))
    return paths
