"""The experiment's controls and harness, for real against a live server (no model).

- The idle control (answers at once, calls nothing) passes no task; an agent that fails
  a write and parrots the goal passes none either.
- The oracle — the LLM agent's own code path, its "model" replaying the scripted
  agent's solution — passes exactly what the scripted agents pass, with the same
  refused writes, on A, B, B-focus and C; with its calls written as text too.
- A model's unreadable or unknown calls go back to it as errors; a quoted affordance
  list is never run; N1 is possible on B (the host lists the tools again).
- Every run records its commit, code, seed and threads, and writes its transcript;
  ``--resume`` will not mix runs made from other code.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from experiment import runner
from experiment.agents.base import Brief, id_argument
from experiment.agents.idle import IDLE_ANSWER
from experiment.agents.llm import LlmAgent, LlmSettings
from experiment.client import McpSession
from experiment.host import ARM_NOTES
from experiment.runner import Config, run_experiment, schedule, select_tasks
from experiment.suite import TASKS
from experiment.tasks import Act

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ALL = tuple(task.id for task in TASKS)


def run(live_server: Any, tmp_path: Path, **config: Any) -> list[dict[str, Any]]:
    config.setdefault("out", tmp_path)
    return run_experiment(Config(**config), base_url=live_server.url, log=lambda line: None)["runs"]


def transcript(out: Path, run: dict[str, Any]) -> dict[str, Any]:
    return json.loads(gzip.decompress((out / run["transcript"]).read_bytes()))


# --- the task set ----------------------------------------------------------------------------


def test_the_task_set_has_thirty_tasks_on_every_compared_interface_across_both_domains():
    tasks = select_tasks(ALL)
    for interface in ("A", "B", "B-focus"):
        slots = schedule(Config(tasks=ALL, interfaces=(interface,)), tasks)
        ran = {task for task, *_ in slots}
        assert len(ran) >= 30, interface
        assert {t for t in ran if t.startswith("Q")} and {t for t in ran if not t.startswith("Q")}
        assert "S5" not in ran  # S1 again where URLs do not matter
    on_c = {task for task, *_ in schedule(Config(tasks=ALL, interfaces=("C",)), tasks)}
    assert "S5" in on_c


# --- the do-nothing and the failing controls -----------------------------------------------


# Every arm: a control that passes on one arm only would bias that arm's success.
ARMS = ("A", "B", "B-focus", "C")


@pytest.mark.parametrize("interface", ARMS)
def test_the_idle_agent_passes_no_task(live_server: Any, demo: Demo, tmp_path: Path, interface):
    runs = run(live_server, tmp_path, tasks=ALL, interfaces=(interface,), agents=("idle",))
    assert {r["task"] for r in runs} == {
        task for task, *_ in schedule(Config(tasks=ALL, interfaces=(interface,)), TASKS)
    }
    passed = [r["task"] for r in runs if r["success"]]
    assert passed == []
    assert all(r["calls"] == 0 and r["answer"] == IDLE_ANSWER for r in runs)


class FlailingAgent:
    """Tries the task's first write once with an argument no tool takes (a refused write
    that still sets off the task's injection), then answers with the goal itself."""

    name = "flailing"

    async def run(self, session: McpSession, brief: Brief) -> str:
        await session.list_tools()
        acts = [step for step in brief.steps if isinstance(step, Act)]
        if acts:
            step = acts[0]
            arguments: dict[str, Any] = {"bogus": 1}
            key = step.order
            if not key.startswith("new:"):
                arguments[id_argument(step.resource)] = brief.pks[key]
            await session.call(step.tool, arguments)
        return brief.goal


@pytest.mark.parametrize("interface", ARMS)
def test_no_task_passes_by_failing_a_write_and_repeating_the_goal(
    live_server: Any,
    demo: Demo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    interface: str,
):
    monkeypatch.setattr(runner, "make_agent", lambda *args, **kwargs: FlailingAgent())
    runs = run(live_server, tmp_path, tasks=ALL, interfaces=(interface,))
    assert [r["task"] for r in runs if r["success"]] == []
    if interface == "C":
        return  # C has no tool per operation: the flailing call is an unknown tool
    # The injections went off (the failed write came first), so R1, R2 and Q7 saw the
    # change — and still fail, because the answer does not report it.
    for task in ("R1", "R2", "Q7"):
        [r] = [r for r in runs if r["task"] == task]
        assert r["injected"], task
        assert r["refusedWrites"]["policy"] == 1, r["refusals"]


# --- the oracle: the LLM path passes what the scripted agents pass -------------------------


@pytest.mark.parametrize("interface", ["A", "B", "B-focus", "C"])
def test_the_oracle_passes_exactly_what_the_scripted_agent_passes(
    live_server: Any, demo: Demo, tmp_path: Path, interface: str
):
    runs = run(
        live_server, tmp_path, tasks=ALL, interfaces=(interface,), agents=("scripted", "oracle")
    )
    by = {(r["task"], r["agent"]): r for r in runs}
    tasks = sorted({r["task"] for r in runs})
    differ = [
        (t, by[(t, "scripted")]["success"], by[(t, "oracle")]["failures"])
        for t in tasks
        if by[(t, "scripted")]["success"] != by[(t, "oracle")]["success"]
        or by[(t, "scripted")]["refusedWrites"] != by[(t, "oracle")]["refusedWrites"]
    ]
    assert differ == []
    for t in tasks:
        oracle = by[(t, "oracle")]
        assert oracle["model"] == "oracle" and oracle["turns"] >= 1
        assert oracle["unparsedCalls"] == 0 and oracle["repairs"] == 0
    passed = {t for t in tasks if by[(t, "scripted")]["success"]}
    failed = set(tasks) - passed
    # What each interface makes possible for a rule-following agent.
    expected_failures = {
        "A": {"R1", "N1", "Q1", "Q10"},
        "B": set(),
        "B-focus": set(),
        "C": set(),
    }
    assert failed == expected_failures[interface], failed


def test_the_oracle_writing_its_calls_as_text_goes_through_the_parser(
    live_server: Any, demo: Demo, tmp_path: Path
):
    runs = run(
        live_server,
        tmp_path,
        tasks=("S1", "N1", "Q7"),
        interfaces=("B", "B-focus"),
        agents=("oracle",),
        oracle_text_calls=True,
    )
    for r in runs:
        assert r["success"], (r["task"], r["interface"], r["failures"])
        assert r["repairs"] == r["calls"] > 0


def test_b_focus_shows_reads_and_creates_first_then_what_the_affordances_name(
    live_server: Any, demo: Demo, tmp_path: Path
):
    [focus] = run(live_server, tmp_path, tasks=("N1",), interfaces=("B-focus",), agents=("oracle",))
    assert focus["success"], focus["failures"]
    [session] = transcript(tmp_path, focus)["sessions"]
    conversation = session["conversation"]
    shown = [
        [tool["function"]["name"] for tool in conversation["tools"][request["tools"]]]
        for request in conversation["requests"]
    ]
    reads_and_creates = {
        "get_order",
        "list_orders",
        "create_order",
        "get_purchase_request",
        "list_purchase_requests",
    }
    assert set(shown[0]) == reads_and_creates
    # The read named hold_order (switched on since the list was taken) and cancel_order:
    # the host listed the tools again and shows those two more — not confirm_order,
    # which the order lists among its unavailable affordances.
    assert set(shown[1]) == reads_and_creates | {"hold_order", "cancel_order"}
    assert [e["kind"] for e in conversation["events"]] == ["tools refreshed"]
    lists = [e for e in session["exchanges"] if e["method"] == "tools/list"]
    assert len(lists) == 2  # the server's list, unfiltered, twice
    assert {"confirm_order", "cancel_order"} <= {
        t["name"] for t in lists[0]["response"]["result"]["tools"]
    }
    assert session["instructions"].endswith(ARM_NOTES["B-focus"])


# --- a model's calls the host cannot run -----------------------------------------------------


class Script:
    """A chat endpoint (httpx2.MockTransport) that answers with ``replies`` in turn and
    keeps every request."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []

    def handle(self, request: Any) -> Any:
        import httpx2

        body = json.loads(request.content)
        self.requests.append(body)
        reply = self.replies[len(self.requests) - 1]
        message = reply(body) if callable(reply) else reply
        return httpx2.Response(
            200,
            json={
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1},
            },
        )


def _text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


def _native(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": f"c-{name}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


# Where the runner believes the model is (the agent's transport answers instead).
SCRIPTED_MODEL = {"llm_endpoint": {"base_url": "http://model.invalid/v1", "model": "script"}}


def _with_script(monkeypatch: pytest.MonkeyPatch, script: Script) -> None:
    import httpx2

    def make(name: str, interface: str, config: Config, repeat: int, condition: str = "plain"):
        settings = LlmSettings(base_url="http://model.invalid/v1", model="script", api_key="")
        return LlmAgent(settings, repeat=repeat, transport=httpx2.MockTransport(script.handle))

    monkeypatch.setattr(runner, "make_agent", make)


def _goal_id(body: dict[str, Any]) -> int:
    """The object the goal names (the runner resets the demo data: ids change)."""
    return int(re.search(r"#(\d+)", body["messages"][1]["content"]).group(1))


def test_unreadable_and_unknown_calls_go_back_to_the_model_and_quoted_affordances_never_run(
    live_server: Any, demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def quote_the_affordances(body: dict[str, Any]) -> dict[str, Any]:
        read = json.loads(body["messages"][-1]["content"])
        # Entries of the object read, quoted back as a list: never to be run.
        return _text(json.dumps(read["unavailableAffordances"] + read["affordances"]))

    script = Script(
        [
            _text('<tool_call>{"name": "get_order", "arguments": {orderId: 1}}</tool_call>'),
            lambda body: _native("delete_order", {"orderId": _goal_id(body)}),
            lambda body: _text(
                json.dumps({"name": "get_order", "arguments": {"orderId": _goal_id(body)}})
            ),
            quote_the_affordances,
            lambda body: _text(
                f"Order #{_goal_id(body)} stays confirmed: only a supervisor may cancel it."
            ),
        ]
    )
    _with_script(monkeypatch, script)
    before = AuditRecord.objects.count()
    [result] = run(
        live_server, tmp_path, tasks=("P1",), interfaces=("B",), agents=("llm",), **SCRIPTED_MODEL
    )

    assert AuditRecord.objects.count() == before  # nothing ran but the read
    assert result["success"], result["failures"]
    assert (result["turns"], result["calls"], result["reads"]) == (5, 1, 1)
    assert result["unparsedCalls"] == 2 and result["repairs"] == 1
    assert result["refusedWrites"]["addressing"] == 1
    assert result["refusals"] == ["delete_order: unknown tool"]
    # What the model was told after each of its turns.
    told = [r["messages"][-1] for r in script.requests[1:]]
    assert (
        told[0]["role"] == "user"
        and "could not be read: it is not valid JSON" in told[0]["content"]
    )
    assert told[1]["role"] == "tool" and "Unknown tool 'delete_order'" in told[1]["content"]
    order = _goal_id(script.requests[0])
    assert told[2]["role"] == "tool" and json.loads(told[2]["content"])["id"] == order
    assert told[3]["role"] == "user" and "could not be read" in told[3]["content"]

    # The transcript holds every request the model was sent and every response.
    [session] = transcript(tmp_path, result)["sessions"]
    conversation = session["conversation"]
    assert len(conversation["requests"]) == len(script.requests) == 5
    for sent, recorded in zip(script.requests, conversation["requests"], strict=True):
        assert sent["messages"] == conversation["messages"][: recorded["messages"]]
        assert sent["tools"] == conversation["tools"][recorded["tools"]]
    assert conversation["messages"][-1]["content"].startswith(f"Order #{order} stays")
    assert [e["kind"] for e in conversation["events"]] == ["unreadable", "unreadable"]


def test_an_operation_switched_on_meanwhile_is_callable_on_b_and_not_on_a(
    live_server: Any, demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    def hold(body: dict[str, Any]) -> dict[str, Any]:
        arguments = {"orderId": _goal_id(body), "note": "Address check before shipping"}
        return _native("hold_order", {**arguments, "expectedVersion": 1})

    def script() -> Script:
        return Script(
            [lambda body: _native("get_order", {"orderId": _goal_id(body)}), hold, _text("Done.")]
        )

    b = script()
    _with_script(monkeypatch, b)
    [on_b] = run(
        live_server,
        tmp_path / "b",
        tasks=("N1",),
        interfaces=("B",),
        agents=("llm",),
        **SCRIPTED_MODEL,
    )
    assert on_b["success"], on_b["failures"]
    assert "hold_order" in {t["function"]["name"] for t in b.requests[1]["tools"]}

    a = script()
    _with_script(monkeypatch, a)
    [on_a] = run(
        live_server,
        tmp_path / "a",
        tasks=("N1",),
        interfaces=("A",),
        agents=("llm",),
        **SCRIPTED_MODEL,
    )
    # A's host never learns of hold_order: the model's call is refused as unknown.
    assert not on_a["success"]
    assert on_a["refusals"] == ["hold_order: unknown tool"]
    assert "hold_order" not in {t["function"]["name"] for t in a.requests[1]["tools"]}


# --- what each run records -------------------------------------------------------------------


def test_each_run_records_its_provenance_and_transcript_and_resume_will_not_mix_code(
    live_server: Any, demo: Demo, tmp_path: Path
):
    [first] = run(live_server, tmp_path, tasks=("S3",), interfaces=("C",))
    assert first["commit"] == "unknown" or len(first["commit"].split("+")[0]) == 40
    assert len(first["code"]) == 16 and first["seed"] == 0 and first["threads"] is None
    assert first["transcript"] == "transcripts/S3_C_scripted_plain_r0.json.gz"
    record = transcript(tmp_path, first)
    [session] = record["sessions"]
    calls = [e for e in session["exchanges"] if e["method"] == "tools/call"]
    assert len(calls) == first["calls"]
    assert all("result" in e["response"] or "error" in e["response"] for e in calls)
    assert session["conversation"] is None  # a scripted agent has no model

    journal = tmp_path / "runs.jsonl"
    journal.write_text(json.dumps({**first, "code": "0" * 16}) + "\n")
    with pytest.raises(ValueError, match="other settings: code"):
        run(live_server, tmp_path, tasks=("S3",), interfaces=("C",), resume=True)
    # A run the model's endpoint failed is done again, not kept.
    journal.write_text(json.dumps({**first, "infrastructureError": "connection refused"}) + "\n")
    lines: list[str] = []
    results = run_experiment(
        Config(tasks=("S3",), interfaces=("C",), out=tmp_path, resume=True),
        base_url=live_server.url,
        log=lines.append,
    )
    assert lines[0].startswith("1 run(s) to do")
    assert "infrastructureError" not in results["runs"][0]
