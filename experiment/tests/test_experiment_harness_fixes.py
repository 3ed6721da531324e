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
from experiment.tests.test_experiment_controls import (
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
