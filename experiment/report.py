"""The report of an experiment: ``results.json``, ``report.md`` and ``chart.png``.

``report.md`` has one row per task x interface x agent (means over the repeats, success
as passed/runs), totals per interface x agent, pass^k per interface x agent (tau-bench's
estimator: for a task passed c times in n runs, C(c, k) / C(n, k), averaged over tasks),
and for a model: its tokens as its server counted them (prompt, cached, tool schemas),
repaired tool calls, and which differences between interfaces are beyond noise
(Fisher's exact test on the runs passed; a Wilson interval per interface).

An agent run under a perturbation (scrambled names, distractor tools) is its own arm:
``llm scrambled`` is reported beside ``llm``, never pooled with it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from math import comb, sqrt
from pathlib import Path
from statistics import mean
from typing import Any

__all__ = [
    "aggregate",
    "fisher_exact",
    "label",
    "model_totals",
    "pass_hat_k",
    "wilson",
    "write_report",
]

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


INTERFACE_LABELS = {"A": "A static", "B": "B hybrid", "B-compact": "B compact", "C": "C forms"}


def _in_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by interface as the seed names them (A, B, B-compact, C), then as they came:
    the run order is shuffled, the tables are not."""
    rank = {interface: index for index, interface in enumerate(INTERFACE_LABELS)}
    return sorted(rows, key=lambda row: rank.get(row["interface"], len(rank)))


def _sum(values: Iterable[Any]) -> float | None:
    """The sum of the counted values; None when none was counted (the server said nothing)."""
    counted = [value for value in values if isinstance(value, int | float)]
    return sum(counted) if counted else None


def model_totals(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per interface x LLM arm: what the model did and what its server counted."""
    rows = []
    llm = [r for r in runs if r["agent"] == "llm"]
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
                "modelSeconds": sum(r.get("modelLatencyMs", 0) for r in group) / 1000,
            }
        )
    return _in_order(rows)


def wilson(passed: int, runs: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a success rate (sound at small n and at 0 or n)."""
    if runs == 0:
        return (0.0, 1.0)
    rate = passed / runs
    centre = (rate + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z / (1 + z * z / runs) * sqrt(rate * (1 - rate) / runs + z * z / (4 * runs * runs))
    return (max(0.0, centre - half), min(1.0, centre + half))


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
        "| completion tok | repairs | model s |\n"
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
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
            f"| {r['repairs']} | {r['modelSeconds']:.0f} |"
        )
    return head + "\n".join(lines) + "\n"


def reading(rows: list[dict[str, Any]], alpha: float = 0.05) -> str:
    """Which differences in runs passed are beyond noise, pair by pair of interfaces."""
    lines = []
    by_agent = _groups(rows, lambda r: r["agent"])
    for agent, group in by_agent.items():
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                p = fisher_exact(first["passed"], first["runs"], second["passed"], second["runs"])
                verdict = "beyond noise" if p < alpha else "within noise"
                lines.append(
                    f"- {agent}: {first['interface']} {first['passed']}/{first['runs']} vs "
                    f"{second['interface']} {second['passed']}/{second['runs']}: "
                    f"Fisher p = {p:.3f}, {verdict} at {alpha}."
                )
    if not lines:
        return ""
    return (
        "Each pair of interfaces, on the runs passed (two-sided Fisher exact test; the "
        "intervals above are 95% Wilson intervals). With few runs per arm only large "
        "differences can show; a difference within noise is not evidence of equality.\n\n"
        + "\n".join(lines)
        + "\n"
    )


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


def write_report(results: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    runs = results["runs"]
    task_rank = {task: index for index, task in enumerate(results["meta"].get("tasks", {}))}
    summary = sorted(aggregate(runs), key=lambda row: task_rank.get(row["task"], len(task_rank)))
    results = {
        **results,
        "summary": summary,
        "totals": totals(runs),
        "passHatK": pass_hat_k(runs),
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
        *(
            [
                f"**Partial: {len(runs)} of {meta['plannedRuns']} planned runs.** Continue "
                "with the same options and `--resume`.\n"
            ]
            if meta.get("complete") is False
            else []
        ),
        *(
            f"## By task, {agent} agent\n\n{compact_table(results['summary'], agent)}"
            for agent in dict.fromkeys(row["agent"] for row in results["summary"])
        ),
        *(
            [
                "## The model, per interface\n",
                _model_meta(meta.get("llm") or {}),
                model_table(model, results["passHatK"]),
                "## Reading\n",
                reading(model),
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
