"""The experiment (docs/experiment/index.md): a small subset run for real, and the metrics it
reports.

The runner drives the official MCP client against pytest-django's live server; every
number is checked against what happened — the refusals the server sent, the audit
records the successes wrote, the requests a fake model endpoint received.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from experiment.agents.llm import DISTRACTORS, SYSTEM_PROMPT
from experiment.client import Exchange, Trace
from experiment.metrics import Change, forbidden_traces, measure
from experiment.report import pass_hat_k, write_report
from experiment.runner import Config, run_experiment
from experiment.tokens import get_tokenizer
from orders.models import Order

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def run(live_server: Any, **config: Any) -> list[dict[str, Any]]:
    return run_experiment(Config(**config), base_url=live_server.url, log=lambda line: None)["runs"]


def one(runs: list[dict[str, Any]], task: str, interface: str) -> dict[str, Any]:
    [found] = [r for r in runs if r["task"] == task and r["interface"] == interface]
    return found


# --- the scripted baselines, for real --------------------------------------------------------


def test_a_subset_runs_and_writes_the_report(live_server: Any, demo: Demo, tmp_path: Path):
    results = run_experiment(
        Config(tasks=("S3", "R1"), interfaces=("A", "B")), base_url=live_server.url, log=str
    )
    results["runs"] += run(live_server, tasks=("L1",), interfaces=("C",))
    paths = write_report(results, tmp_path)

    written = json.loads(paths["json"].read_text())
    # Task by task in the seed's order, each through both interfaces.
    order = [(r["task"], r["interface"]) for r in written["runs"]]
    assert {t for t, _ in order[:2]} != {t for t, _ in order[2:4]}
    assert {i for _, i in order[:2]} == {i for _, i in order[2:4]} == {"A", "B"}
    assert order[4] == ("L1", "C")
    for entry in written["runs"]:  # docs/experiment/index.md's shape
        assert entry["agent"] == "scripted" and entry["repeat"] == 0
        assert isinstance(entry["success"], bool)
        for key in ("invalidTransitions", "calls", "reads", "staleConflicts", "leaks"):
            assert isinstance(entry[key], int), key
        assert set(entry["contextBytes"]) >= {"schemas", "responses"}
        assert entry["contextBytes"]["schemas"] > 0 and entry["contextBytes"]["responses"] > 0
        assert isinstance(entry["latencyMs"], float) and entry["latencyMs"] > 0
    report = paths["markdown"].read_text()
    assert "| task | if | agent | success | invalid | calls |" in report
    assert re.search(r"\| S3 \| A \| scripted \| 1/1 \| 1 \| 2 \| 0 \|", report), report
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    s3_a, s3_b = one(written["runs"], "S3", "A"), one(written["runs"], "S3", "B")
    # A tried to ship the pending order: one refusal, the only invalid transition.
    assert s3_a["success"] is True
    assert s3_a["invalidTransitions"] == 1
    assert s3_a["refusals"] == ["ship_order: operation_not_available (not_confirmed)"]
    assert (s3_a["calls"], s3_a["reads"]) == (2, 0)  # create_order, ship_order
    # B saw ship_order among the unavailable affordances of the order it created.
    assert (s3_b["success"], s3_b["invalidTransitions"], s3_b["calls"]) == (True, 0, 1)

    r1_a, r1_b = one(written["runs"], "R1", "A"), one(written["runs"], "R1", "B")
    # The order was confirmed between the read and the cancel: A cancelled it anyway.
    assert r1_a["success"] is False and r1_a["staleConflicts"] == 0
    assert r1_a["injected"] == "before cancel_order"
    # B sent expectedVersion, was refused as stale, read again and left it confirmed.
    assert r1_b["success"] is True
    assert (r1_b["staleConflicts"], r1_b["staleRecovered"]) == (1, 1)
    assert r1_b["refusals"] == ["cancel_order: stale_version"]
    assert (r1_b["calls"], r1_b["reads"], r1_b["invalidTransitions"]) == (3, 2, 0)

    l1_c = one(written["runs"], "L1", "C")
    assert l1_c["success"] is True and l1_c["leaks"] == 0
    assert l1_c["contextBytes"]["schemas"] < s3_a["contextBytes"]["schemas"]


def test_b_compact_does_what_b_does_on_fewer_bytes(live_server: Any, demo: Demo):
    runs = run(live_server, tasks=("S3", "R1"), interfaces=("B", "B-compact"))
    for task in ("S3", "R1"):
        b, compact = one(runs, task, "B"), one(runs, task, "B-compact")
        assert compact["success"] and compact["invalidTransitions"] == 0
        assert (compact["calls"], compact["reads"]) == (b["calls"], b["reads"])
        assert compact["contextBytes"]["responses"] < b["contextBytes"]["responses"]
        assert compact["contextBytes"]["schemas"] == b["contextBytes"]["schemas"]


def test_calls_and_reads_match_the_audit_log(live_server: Any, demo: Demo):
    before = AuditRecord.objects.count()
    [s6] = run(live_server, tasks=("S6",), interfaces=("B",))
    written = AuditRecord.objects.count() - before
    # Every call that was neither a read nor refused wrote exactly one audit record.
    assert s6["success"] is True
    assert written == 6  # three creations, two confirmations, one cancellation
    assert s6["calls"] - s6["reads"] - s6["invalidTransitions"] - s6["staleConflicts"] == written


def test_a_refusal_caused_by_another_users_change_is_a_conflict_on_every_interface(
    live_server: Any, demo: Demo
):
    runs = run(live_server, tasks=("R2",), interfaces=("A", "B"))
    a, b = one(runs, "R2", "A"), one(runs, "R2", "B")
    # A confirmed without reading (no version): refused because the order was cancelled
    # meanwhile — which is the other user's doing, not A's mistake.
    assert a["refusals"] == ["confirm_order: operation_not_available (order_cancelled)"]
    assert a["refusedWrites"] == {"policy": 0, "madeUpVersion": 0, "addressing": 0, "conflict": 1}
    assert (a["invalidTransitions"], a["staleConflicts"]) == (0, 1)
    # B sent the version it had read: stale_version for a real change, then recovered.
    assert (b["invalidTransitions"], b["staleConflicts"], b["staleRecovered"]) == (0, 1, 1)
    assert a["success"] and b["success"]


def test_a_new_operation_reaches_b_and_c_but_not_a_frozen_static_list(live_server: Any, demo: Demo):
    runs = run(live_server, tasks=("N1",), interfaces=("A", "B", "C"))
    assert [one(runs, "N1", i)["success"] for i in "ABC"] == [False, True, True]
    assert all(r["injected"] == "after tools/list" for r in runs)
    assert one(runs, "N1", "A")["calls"] == 0  # hold_order was not in its list
    # The switch was undone after each run: the catalog is the default one again.
    from affordances.catalog import get_catalog

    assert get_catalog().lookup("hold_order") is None


# --- metrics from a trace ------------------------------------------------------------------


def _call(name: str, arguments: dict[str, Any], result: dict[str, Any] | None = None, **kw: Any):
    envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": 1}
    if "error" in kw:
        envelope["error"] = kw["error"]
    else:
        envelope["result"] = result
    body = json.dumps(envelope).encode()
    return Exchange(
        method="tools/call",
        params={"name": name, "arguments": arguments},
        status=200,
        request_bytes=10,
        response_bytes=len(body),
        latency_ms=1.5,
        body=body,
        envelope=envelope,
    )


def _result(body: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(body)}],
        "structuredContent": body,
        "isError": error,
    }


def test_measure_splits_refused_writes_by_cause_and_counts_leaks():
    listing = Exchange(
        method="tools/list",
        params={},
        status=200,
        request_bytes=5,
        response_bytes=5,
        latency_ms=1.0,
        body=b"{}",
        envelope={
            "result": {
                "tools": [
                    {"name": "read_resource", "annotations": {"readOnlyHint": True}},
                    {"name": "submit_form", "annotations": {"readOnlyHint": False}},
                    {"name": "cancel_order", "annotations": {"readOnlyHint": False}},
                ]
            }
        },
    )
    url = "http://x/api/orders/1/"
    document = {"id": 1, "_links": {"self": {"href": url}}, "_templates": {"cancel_order": {}}}
    gone = {"code": "operation_not_available", "reason": "already_cancelled"}
    stale = {"code": "stale_version", "status": 412, "detail": "…"}

    def cancel(version: int, pk: int = 1) -> Exchange:
        arguments = {"orderId": pk, "reason": "customer_request", "expectedVersion": version}
        return _call("cancel_order", arguments, _result(stale, error=True))

    trace = Trace(
        exchanges=[
            listing,  # 0
            _call("read_resource", {"url": url}, _result(document)),  # 1
            # Here another user cancels order 1 (the change below, at 2).
            # Offered before the change, gone now: a conflict.
            _call(
                "submit_form", {"url": url, "template": "cancel_order"}, _result(gone, error=True)
            ),
            # The version the order had before the change, which the agent had not seen.
            cancel(3),
            # Never applied: the rules refused it.
            _call("submit_form", {"url": url, "template": "ship_order"}, _result(gone, error=True)),
            # The agent reads the order as it is now…
            _call("read_resource", {"url": url}, _result({**document, "note": "/refund/"})),
            # …and still sends the old version: its own mistake, as a version made up.
            cancel(3),
            cancel(7, pk=2),  # nothing changed order 2: made up
            _call("nonexistent", {}, error={"code": -32602, "message": "Unknown tool."}),
            _call(
                "submit_form",
                {"url": "http://x/api/orders/99", "template": "cancel_order"},
                _result({"code": "not_found", "status": 404, "detail": "Not found."}, error=True),
            ),
        ],
        schemas_text="x" * 40,
        local_refusals=[("archive_order", "distractor")],
    )
    change = Change(
        resource="order",
        pk=1,
        path="/api/orders/1/",
        version_before=3,
        available_before=frozenset({"cancel_order", "confirm_order"}),
        at=2,
    )
    metrics = measure(
        trace,
        forbidden=["/refund/", "refund_order"],
        success=True,
        tokenizer=get_tokenizer(),
        changes=[change],
    )
    assert (metrics.calls, metrics.reads, metrics.listings) == (9, 2, 1)
    assert metrics.refused == {"policy": 1, "madeUpVersion": 2, "addressing": 3, "conflict": 2}
    assert metrics.invalid_transitions == 6
    assert (metrics.stale_conflicts, metrics.stale_recovered) == (2, 2)
    assert metrics.leaks == 1 and metrics.leak_samples == ["/refund/"]
    assert metrics.context_bytes["schemas"] == 40
    assert metrics.latency_ms == pytest.approx(14.5)

    # Without the change every stale_version is made up, and nothing is a conflict.
    alone = measure(trace, forbidden=[], success=True, tokenizer=get_tokenizer())
    assert alone.refused == {"policy": 2, "madeUpVersion": 3, "addressing": 3, "conflict": 0}


def test_forbidden_traces_name_every_trace_of_an_operation(demo: Demo):
    from affordances.catalog import get_catalog

    alice = demo.users["alice"]
    hidden = [op for op in get_catalog() if not op.permits(alice)]
    allowed = [op for op in get_catalog() if op.permits(alice)]
    traces = forbidden_traces(hidden, allowed)
    for expected in ("confirm_order", "Confirm order", "/confirm/", "cancel_purchase_request"):
        assert expected in traces
    # What alice's own cancel_order shares with the purchase requests' cancel proves nothing.
    assert "/cancel/" in forbidden_traces(hidden)
    for own in ("cancel_order", "/cancel/", "Cancel order"):
        assert own not in traces
    # A create has no path segment ("/draft/" is in every JSON Schema's $schema).
    assert "/draft/" not in traces


def test_pass_hat_k_uses_the_unbiased_estimator():
    runs = [
        {"task": "T", "interface": "A", "agent": "llm", "success": ok} for ok in (True, True, False)
    ]
    assert pass_hat_k(runs) == {
        "A/llm": {"1": pytest.approx(0.667, abs=1e-3), "2": 0.333, "3": 0.0}
    }


# --- the LLM agent against a fake OpenAI-compatible endpoint --------------------------------


class FakeModel:
    """Chat completions scripted from what the request holds; every request is kept."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    @staticmethod
    def tool_named_by(request: dict[str, Any], description_start: str) -> str:
        for tool in request["tools"]:
            if tool["function"]["description"].startswith(description_start):
                return tool["function"]["name"]
        raise AssertionError(f"no tool described as {description_start!r}")

    @staticmethod
    def distractor(request: dict[str, Any]) -> str:
        fakes = {fake["description"] for fake in DISTRACTORS}
        return next(
            t["function"]["name"] for t in request["tools"] if t["function"]["description"] in fakes
        )

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        order_id = int(re.search(r"#(\d+)", messages[1]["content"]).group(1))
        tool_results = [m for m in messages if m["role"] == "tool"]
        if not tool_results:
            calls = [
                ("call-1", self.tool_named_by(request, "Read one order"), {"orderId": order_id})
            ]
        elif len(tool_results) == 1:
            # The text block (the representation), then the resource_link block.
            order = json.loads(tool_results[0]["content"].splitlines()[0])
            cancel = next(a for a in order["affordances"] if a["name"].startswith("tool_"))
            calls = [
                (
                    "call-2",
                    cancel["name"],
                    {
                        **cancel["arguments"],
                        "reason": "customer_request",
                        "expectedVersion": cancel["validForVersion"],
                    },
                ),
                ("call-3", self.distractor(request), {"orderId": order_id}),
            ]
        else:
            return {"role": "assistant", "content": f"Cancelled #{order_id}."}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, n, a in calls
            ],
        }


@pytest.fixture
def fake_model() -> Iterator[tuple[str, FakeModel]]:
    model = FakeModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            model.requests.append(body)
            model.headers.append(dict(self.headers))
            ok = self.path == "/v1/chat/completions"
            answer = {
                "id": "fake",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": model.reply(body), "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
            data = json.dumps(answer if ok else {"error": "not found"}).encode()
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", model
    finally:
        server.shutdown()
        server.server_close()


def test_the_llm_agent_round_trips_tool_calls_with_scrambled_names_and_distractors(
    live_server: Any,
    demo: Demo,
    fake_model: tuple[str, FakeModel],
    monkeypatch: Any,
    tmp_path: Path,
):
    base_url, model = fake_model
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_MODEL", "fake-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    config = Config(
        tasks=("P2",),
        interfaces=("B",),
        agents=("llm",),
        conditions=("scrambled+distractors",),
        distractors=2,
        seed=7,
    )
    results = run_experiment(config, base_url=live_server.url, log=lambda line: None)
    [result] = results["runs"]
    assert results["meta"]["llm"]["model"] == "fake-model"
    assert result["condition"] == "scrambled+distractors"
    assert (
        "| P2 | B | llm scrambled+distractors | 1/1 | 1 | 2 | 1 |"
        in write_report(results, tmp_path)["markdown"].read_text()
    )

    assert len(model.requests) == 3
    assert model.headers[0]["Authorization"] == "Bearer sk-test"
    first = model.requests[0]
    assert first["model"] == "fake-model"
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert all(name.startswith("tool_") for name in names)  # scrambled, none real
    # alice's catalog (orders: list, get, create, cancel; purchase requests: list, get)
    # and two distractors.
    assert len(names) == 6 + 2
    system = first["messages"][0]["content"]
    assert system.startswith(SYSTEM_PROMPT) and "validForVersion" in system  # + B's instructions
    # The tool results went back to the model, answered by call id, names renamed too.
    second = model.requests[1]["messages"]
    [order_result] = [m for m in second if m["role"] == "tool"]
    assert order_result["tool_call_id"] == "call-1"
    order = json.loads(order_result["content"].splitlines()[0])
    # The runner reset the demo orders before the run: demo-01 has a new id.
    demo_01 = Order.objects.get(description="Demo order demo-01")
    assert order["id"] == demo_01.pk and "cancel_order" not in order_result["content"]
    third = model.requests[2]["messages"]
    answered = {m["tool_call_id"]: m["content"] for m in third if m["role"] == "tool"}
    assert json.loads(answered["call-2"].splitlines()[0])["status"] == "cancelled"
    assert "not available" in answered["call-3"]

    demo_01.refresh_from_db()
    assert demo_01.status == "cancelled"
    assert result["success"] is True and result["answer"] == f"Cancelled #{order['id']}."
    assert result["calls"] == 2 and result["reads"] == 1
    assert result["invalidTransitions"] == 1  # the distractor, and nothing else
    [refusal] = result["refusals"]
    assert refusal.endswith(": distractor")
    assert refusal.split(":")[0] in {fake["name"] for fake in DISTRACTORS}
    # As the endpoint counted: 100 prompt and 10 completion tokens a turn; it said
    # nothing of a cache and has no /tokenize, so those are unknown, not zero.
    assert (result["model"], result["turns"], result["repairs"]) == ("fake-model", 3, 0)
    assert (result["promptTokens"], result["completionTokens"]) == (300, 30)
    assert result["cachedPromptTokens"] is None and result["toolSchemaTokens"] is None
    assert result["modelLatencyMs"] > 0
    assert result["contextBytes"]["schemas"] == len(
        json.dumps(first["tools"], separators=(",", ":"), ensure_ascii=False).encode()
    )


def test_the_llm_agent_needs_its_endpoint_in_the_environment(monkeypatch: Any):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        run_experiment(Config(agents=("llm",)), base_url="http://127.0.0.1:9", log=print)


def test_a_phase_told_of_an_object_no_earlier_phase_made_fails_with_that_reason():
    from experiment.tasks import fill_goal

    assert fill_goal("Approve {new:1}.", {"new:1": 42}) == "Approve #42."
    with pytest.raises(LookupError, match="new:1 was never created"):
        fill_goal("Approve {new:1}.", {})
