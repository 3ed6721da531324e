"""The report of an experiment: ``results.json``, ``report.md`` and ``chart.png``.

``report.md`` has one row per task x interface x agent (means over the repeats, success
as passed/runs), totals per interface x agent, and — with repeats — pass^k per
interface x agent (tau-bench's estimator: for a task passed c times in n runs,
C(c, k) / C(n, k), averaged over tasks).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from math import comb
from pathlib import Path
from statistics import mean
from typing import Any

__all__ = ["aggregate", "pass_hat_k", "write_report"]

Key = tuple[str, str, str]


def _groups(runs: Iterable[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        groups[key(run)].append(run)
    return groups


def aggregate(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per task x interface x agent, in run order."""
    rows = []
    for (task, interface, agent), group in _groups(
        runs, lambda r: (r["task"], r["interface"], r["agent"])
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
    return rows


def pass_hat_k(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """``{"A/scripted": {"1": 0.9, "2": 0.85, …}}`` over the tasks run."""
    table: dict[str, dict[str, float]] = {}
    by_arm = _groups(runs, lambda r: f"{r['interface']}/{r['agent']}")
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
    return table


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
    for (interface, agent), group in _groups(runs, lambda r: (r["interface"], r["agent"])).items():
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
    return rows


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
        axis.set_xticklabels(
            [{"A": "A static", "B": "B hybrid", "C": "C forms"}.get(i, i) for i in interfaces]
        )
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


def write_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    runs = results["runs"]
    results = {**results, "summary": aggregate(runs), "totals": totals(runs)}
    if results["meta"].get("repeat", 1) > 1:
        results["passHatK"] = pass_hat_k(runs)
    paths = {
        "json": out / "results.json",
        "markdown": out / "report.md",
        "chart": out / "chart.png",
    }
    paths["json"].write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    chart(runs, paths["chart"])
    meta = results["meta"]
    parts = [
        "# Experiment report\n",
        f"Interfaces {', '.join(f'{k} ({v})' for k, v in meta['interfaces'].items())}; "
        f"agents {', '.join(meta['agents'])}; {meta['repeat']} run(s) each; protocol mode "
        f"`{meta['protocol']}`; tokens: {meta['tokenizer']}; wall time {meta['wallSeconds']} s.\n",
        *(
            f"## By task, {agent} agent\n\n{compact_table(results['summary'], agent)}"
            for agent in meta["agents"]
        ),
        "## Totals per interface\n",
        _totals_table(results["totals"]),
        "## Runs (means over repeats)\n",
        markdown_table(results["summary"]),
    ]
    if "passHatK" in results:
        parts.append("## pass^k\n")
        parts.append(
            "| arm | "
            + " | ".join(f"k={k}" for k in next(iter(results["passHatK"].values())))
            + " |\n|---|"
            + "---:|" * len(next(iter(results["passHatK"].values())))
            + "\n"
            + "\n".join(
                f"| {arm} | " + " | ".join(f"{v:.2f}" for v in ks.values()) + " |"
                for arm, ks in results["passHatK"].items()
            )
            + "\n"
        )
    failed = [r for r in runs if not r["success"]]
    if failed:
        parts.append("## Failed runs\n")
        parts.append(
            "\n".join(
                f"- {r['task']} {r['interface']} {r['agent']} #{r['repeat']}: "
                + "; ".join(r["failures"])
                for r in failed
            )
            + "\n"
        )
    parts.append("## Tasks\n")
    parts.append("\n".join(f"- **{k}** {v}" for k, v in meta["tasks"].items()) + "\n")
    parts.append(f"\n![chart]({paths['chart'].name})\n")
    paths["markdown"].write_text("\n".join(parts))
    return paths
