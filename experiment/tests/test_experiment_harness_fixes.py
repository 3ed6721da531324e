"""The harness as the audit of the 510-run confirmatory experiment asked it to be fixed.

- B-focus forwards a call to a real tool it did not show to the server, which answers
  it as on B (the old host answered "Unknown tool", false and without the reason).
- The "say why" checks want the item's own reason and no other: an agent that calls
  nothing and answers one paragraph stuffed with every reason passes no task, on any arm.
- The idle and flailing controls pass nothing on every arm (not on B alone).
- No report and no confirmatory test is written from an incomplete run; every report
  has a deviations section.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from experiment.reasons import REASONS, STUFFED_ANSWER, given, why_failure
from experiment.report import IncompleteRun, write_report
from experiment.runner import Config, run_experiment
from experiment.tests.test_experiment_controls import (
    ALL,
    SCRIPTED_MODEL,
    Script,
    _goal_id,
    _native,
    _text,
    _with_script,
    run,
)

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ARMS = ("A", "B", "B-focus", "C")


def test_b_focus_forwards_a_call_to_a_hidden_real_tool_and_returns_the_servers_answer(
    live_server: Any, demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # P1: support may not cancel a high-value order. The model cancels before reading
    # anything: cancel_order is not shown yet on B-focus (no read named it).
    script = Script(
        [
            lambda body: _native(
                "cancel_order", {"orderId": _goal_id(body), "reason": "customer_request"}
            ),
            lambda body: _native("make_coffee", {"orderId": _goal_id(body)}),
            _text("It stays confirmed: cancelling it requires a supervisor."),
        ]
    )
    _with_script(monkeypatch, script)
    before = AuditRecord.objects.count()
    [result] = run(
        live_server,
        tmp_path,
        tasks=("P1",),
        interfaces=("B-focus",),
        agents=("llm",),
        **SCRIPTED_MODEL,
    )
    shown = {tool["function"]["name"] for tool in script.requests[0]["tools"]}
    assert "cancel_order" not in shown
    told = json.loads(script.requests[1]["messages"][-1]["content"])
    # The server's refusal, with its reason — as B's model would have been told.
    assert told["code"] == "operation_not_available", told
    assert told["reason"] == "requires_supervisor"
    assert AuditRecord.objects.count() == before
    # A name the server does not have is still an unknown tool.
    unknown = script.requests[2]["messages"][-1]["content"]
    assert "Unknown tool 'make_coffee'" in unknown
    assert result["refusals"] == [
        "cancel_order: operation_not_available (requires_supervisor)",
        "make_coffee: unknown tool",
    ]
    assert result["success"], result["failures"]


# --- saying why: the item's reason and no other ------------------------------------------


@pytest.mark.parametrize("interface", ARMS)
def test_the_keyword_stuffing_agent_passes_no_task(
    live_server: Any, demo: Demo, tmp_path: Path, interface: str
):
    # It passed P1, P4, P7, P9 and Q5 on every arm when "say why" was a bag of words.
    runs = run(live_server, tmp_path, tasks=ALL, interfaces=(interface,), agents=("stuffing",))
    assert {"P1", "P4", "P7", "P9", "Q5"} <= {r["task"] for r in runs}
    assert [r["task"] for r in runs if r["success"]] == []
    assert all(r["calls"] == 0 and r["answer"] == STUFFED_ANSWER for r in runs)
    [p1] = [r for r in runs if r["task"] == "P1"]
    assert any("other reasons too" in failure for failure in p1["failures"]), p1["failures"]


def test_a_reason_is_given_by_its_code_or_its_own_words_and_alone():
    assert given(STUFFED_ANSWER) == set(REASONS)
    for code in REASONS:
        assert why_failure(STUFFED_ANSWER, code) is not None
        assert why_failure(f"Could not do it: {code}", code) is None
    # The answers the scripted agents give (A hears the server's refusal, C its form).
    assert why_failure("Could not refund: amount is at most 300.0", "refund_above_total") is None
    said = (
        "Could not refund #7: validation_error "
        "(amount: Ensure this value is less than or equal to 300.)"
    )
    assert why_failure(said, "refund_above_total") is None
    assert why_failure("It stays: only a supervisor may cancel it.", "requires_supervisor") is None
    assert why_failure("Its payment has not been authorized yet.", "payment_not_authorized") is None
    # Words of the goal, or of another reason, are not this one.
    assert why_failure("I could not confirm it; the payment.", "payment_not_authorized")
    assert why_failure("It is over the approval limit.", "budget_exhausted")
    # Another reason beside it: allowed only when the item has that reason too.
    both = "Not approved: the budget is exhausted and it is over the approval limit."
    assert why_failure(both, "budget_exhausted")
    assert why_failure(both, "budget_exhausted", allowed=["over_approval_limit"]) is None


# --- no report before the run is complete; a deviations section in every report ---------


def _results(complete: bool, **provenance: list[str]) -> dict[str, Any]:
    run = {
        "task": "P1",
        "interface": "A",
        "agent": "idle",
        "condition": "plain",
        "repeat": 0,
        "success": False,
        "failures": ["x"],
    }
    meta = {
        "interfaces": {"A": "static"},
        "tasks": {"P1": "p1"},
        "agents": ["idle"],
        "repeat": 1,
        "protocol": "auto",
        "tokenizer": "bytes/4",
        "wallSeconds": 1.0,
        "plannedRuns": 2 if not complete else 1,
        "complete": complete,
        "provenance": {"commit": ["c1"], "code": ["d1"], **provenance},
    }
    return {"meta": meta, "runs": [run]}


def test_no_report_or_test_is_written_from_an_incomplete_run(tmp_path: Path):
    with pytest.raises(IncompleteRun, match="1 of 2 planned runs"):
        write_report(_results(False), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_every_report_has_a_deviations_section(live_server: Any, demo: Demo, tmp_path: Path):
    results = run_experiment(
        Config(tasks=("P1", "S3"), interfaces=("A",), agents=("idle",), out=tmp_path / "runs"),
        base_url=live_server.url,
        log=lambda line: None,
    )
    # The experiment's server asks for no confirmation, and every run says so.
    assert all(r["confirmations"] is False for r in results["runs"])
    report = write_report(results, tmp_path)["markdown"].read_text()
    assert "## Deviations from the plan\n\nNone recorded." in report
    (tmp_path / "deviations.md").write_text("- B-focus's prompt had one sentence more.\n")
    provenance = results["meta"]["provenance"]
    mixed = {
        **results,
        "meta": {**results["meta"], "provenance": {**provenance, "commit": ["c1", "c2"]}},
    }
    report = write_report(mixed, tmp_path)["markdown"].read_text()
    section = report.split("## Deviations from the plan")[1].split("\n## ")[0]
    assert "more than one commit: c1, c2" in section
    assert "B-focus's prompt had one sentence more." in section
    asked = {**provenance, "confirmations": ["True"]}
    report = write_report({**results, "meta": {**results["meta"], "provenance": asked}}, tmp_path)
    assert "asked for confirmations" in report["markdown"].read_text()
