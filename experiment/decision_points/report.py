"""The decision-point study's report, written once from the complete journal.

``manage.py decision_points report --out DIR --samples 10``: reads the frozen files
(checked against ``MANIFEST.json``) and ``DIR/completions.jsonl``, rescoring every
completion with the scorer of this commit (a completion whose recorded score differs is
a deviation, listed), and writes ``DIR/analysis.json`` and ``DIR/report.md``: per arm
the correct decisions with 95% Wilson intervals (all, write items, trap items), the
secondary measures, the pre-registered tests
(:func:`~experiment.decision_points.analysis.analyse`) and a deviations section. It
refuses an incomplete run (:class:`~experiment.report.IncompleteRun`): no interim
analysis. The same function recomputes the report from the raw file at any time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from experiment.decision_points.analysis import HYPOTHESES, analyse
from experiment.decision_points.arms import ARMS
from experiment.decision_points.run import COMPARABLE, JOURNAL, finished, load, plan
from experiment.decision_points.scoring import score
from experiment.report import DEVIATIONS_FILE, IncompleteRun
from experiment.stats import wilson

__all__ = ["write_report"]


def _rate(records: list[dict[str, Any]]) -> str:
    passed = sum(bool(r["score"]["correct"]) for r in records)
    if not records:
        return "-"
    low, high = wilson(passed, len(records))
    return f"{passed}/{len(records)} ({100 * low:.0f}%-{100 * high:.0f}%)"


def _deviations(records: list[dict[str, Any]], rescored: list[str], folder: Path) -> str:
    found = []
    for key in COMPARABLE:
        values = sorted({json.dumps(r.get(key)) for r in records})
        if len(values) > 1:
            found.append(
                f"- The completions were made with more than one {key}: {', '.join(values)}."
            )
    if any(r.get("confirmations") is not False for r in records):
        found.append("- Some prompts were frozen from a server that asked for confirmations.")
    if rescored:
        found.append(
            f"- {len(rescored)} completion(s) score differently with this commit's scorer "
            f"than when they were made: {', '.join(rescored[:10])}"
            + (" …" if len(rescored) > 10 else "")
            + "."
        )
    written = folder / DEVIATIONS_FILE
    if written.exists() and written.read_text().strip():
        found.append(written.read_text().strip())
    return "## Deviations from the plan\n\n" + ("\n".join(found) or "None recorded.") + "\n"


def write_report(folder: Path, *, samples: int, seed: int = 0) -> dict[str, Path]:
    frozen = load(folder)
    records = finished(folder / JOURNAL)
    planned = set(plan(list(frozen.items), samples, seed))
    made = {(r["item"], r["arm"], r["sample"]) for r in records}
    if not planned <= made:
        raise IncompleteRun(
            f"{len(made & planned)} of {len(planned)} planned completions: no report and no "
            "pre-registered test before the run is complete (run again to finish it)."
        )
    records = [r for r in records if (r["item"], r["arm"], r["sample"]) in planned]
    rescored = []
    for record in records:
        again = score(frozen.items[record["item"]], record["response"])
        if bool(again["correct"]) != bool(record["score"]["correct"]):
            rescored.append(f"{record['item']} {record['arm']} #{record['sample']}")
        record["score"] = again
    found = analyse(records, len(planned), frozen.items)
    by_arm = {arm: [r for r in records if r["arm"] == arm] for arm in ARMS}
    lines = [
        "# The decision-point study: report",
        "",
        f"{len(frozen.items)} items x {len(ARMS)} arms x {samples} samples = "
        f"{len(records)} completions (seed {seed}); plan: "
        "[the pre-registration](preregistration.md).",
        "",
        _deviations(records, rescored, folder),
        "## Arms",
        "",
        "Correct decisions with their 95% Wilson interval; secondary: attempted writes the "
        "server would refuse, invented tool names, re-reads of the object just read.",
        "",
        "| arm | all | write items | trap items | refused writes | invented | re-reads |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for arm, group in by_arm.items():
        kinds = {
            kind: [r for r in group if frozen.items[r["item"]]["kind"] == kind]
            for kind in ("write", "trap")
        }
        counts = [
            sum(bool(r["score"][key]) for r in group)
            for key in ("refusedWrite", "invented", "reread")
        ]
        lines.append(
            f"| {arm} | {_rate(group)} | {_rate(kinds['write'])} | {_rate(kinds['trap'])} | "
            + " | ".join(str(c) for c in counts)
            + " |"
        )
    lines += [
        "",
        "## Pre-registered tests",
        "",
        "The exact conditional test stratified by item (CMH χ² and MH odds ratio beside it), "
        "Holm over H1-H3; the difference is the mean over tasks, with a 95% interval from "
        "2,000 task resamples; sensitivity: a logistic GLMM (arm fixed, item random "
        "intercept), its Wald test.",
        "",
        "| | comparison | difference, points (95% CI) | exact p | Holm p | CMH χ² (p) | MH OR "
        "| GLMM log OR (p) |",
        "|---|---|---|---:|---:|---|---:|---|",
    ]
    for name, treatment, baseline in HYPOTHESES:
        h = found[name]
        odds = "-" if h["oddsRatio"] is None else f"{h['oddsRatio']:.2f}"
        lines.append(
            f"| {name} | {treatment} vs {baseline} | {h['differencePoints']:+.1f} "
            f"({h['bootstrap95'][0]:+.1f} to {h['bootstrap95'][1]:+.1f}) | {h['exactP']:.4f} | "
            f"{h['holmP']:.4f} | {h['cmhChi2']:.2f} ({h['cmhP']:.4f}) | {odds} | "
            f"{h['glmm']['logOddsRatio']:+.2f} ({h['glmm']['p']:.4f}) |"
        )
    paths = {"json": folder / "analysis.json", "markdown": folder / "report.md"}
    paths["json"].write_text(json.dumps(found, indent=1) + "\n")
    paths["markdown"].write_text("\n".join(lines) + "\n")
    return paths
