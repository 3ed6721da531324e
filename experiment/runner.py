"""Run tasks x interfaces x agents x repeats against a live server; collect the runs.

Per run: reset the demo orders, give the agent a session as the task's user on the
interface's endpoint, let the runner change the world where the task says so, then
check the database and measure the recorded traffic. The ORM is used only outside the
event loop: before and after a run in this thread, during a run in one worker thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import connections
from django.test import override_settings
from django.utils import timezone
from django.utils.crypto import get_random_string

from experiment.agents.base import Agent, Brief
from experiment.client import McpSession
from experiment.metrics import combined, forbidden_traces, measure
from experiment.suite import TASKS
from experiment.tasks import Check, Phase, Task, fill_goal
from experiment.tokens import get_tokenizer

__all__ = [
    "CONDITIONS",
    "ENDPOINTS",
    "Config",
    "interface_id",
    "live_server",
    "run_experiment",
    "schedule",
    "select_tasks",
]

ENDPOINTS = {"A": "/mcp/static", "B": "/mcp", "B-compact": "/mcp/compact", "C": "/mcp/forms"}
INTERFACE_NAMES = {"A": "static", "B": "hybrid", "B-compact": "compact", "C": "forms"}
AGENTS = ("scripted", "llm")
# ToolSandbox-style perturbations of the tool list the model sees (LLM agent only),
# each reported as its own condition.
CONDITIONS = ("plain", "scrambled", "distractors", "scrambled+distractors")


def interface_id(name: str) -> str:
    """``b-compact`` → ``B-compact``; ValueError for a name that is none of ours."""
    for known in ENDPOINTS:
        if known.lower() == name.strip().lower():
            return known
    raise ValueError(f"Unknown interface {name!r}: use {', '.join(ENDPOINTS)}.")


@dataclass(frozen=True)
class Config:
    interfaces: tuple[str, ...] = ("A", "B", "C")
    tasks: tuple[str, ...] = tuple(task.id for task in TASKS)
    agents: tuple[str, ...] = ("scripted",)
    repeat: int = 1
    seed: int = 0
    out: Path = Path("out/experiment")
    mode: str = "auto"
    # LLM agent only.
    max_steps: int = 20
    conditions: tuple[str, ...] = ("plain",)
    # How many distractor tools the distractors conditions add.
    distractors: int = 4
    # Where the model is, when not from OPENAI_* (a local server: base_url, model,
    # tokenize_url, …), and LlmSettings options (max_tokens, temperature).
    llm_endpoint: Mapping[str, Any] | None = None
    llm_options: Mapping[str, Any] = field(default_factory=dict)
    # Facts about the model for the report (its file's sha256, the server's version).
    llm_meta: Mapping[str, Any] = field(default_factory=dict)
    # Keep each run in out/runs.jsonl as it ends; with resume, skip the runs found there.
    resume: bool = False


def select_tasks(ids: tuple[str, ...]) -> list[Task]:
    by_id = {task.id: task for task in TASKS}
    unknown = [task_id for task_id in ids if task_id not in by_id]
    if unknown:
        raise ValueError(f"Unknown task(s): {', '.join(unknown)}. Known: {', '.join(by_id)}.")
    return [by_id[task_id] for task_id in ids]


@contextmanager
def live_server() -> Iterator[str]:
    """Django's threaded WSGI server on 127.0.0.1 and a free port, in this process."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    thread = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    try:
        yield f"http://127.0.0.1:{thread.port}"
    finally:
        thread.terminate()


def llm_settings(config: Config, condition: str = "plain") -> Any:
    """The LLM agent's settings for one condition: the configured endpoint, else OPENAI_*."""
    from experiment.agents.llm import LlmSettings

    options: dict[str, Any] = {
        "max_steps": config.max_steps,
        "scramble_names": "scrambled" in condition,
        "distractors": config.distractors if "distractors" in condition else 0,
        "seed": config.seed,
        **config.llm_options,
    }
    if config.llm_endpoint is not None:
        return LlmSettings(**{"api_key": "", **config.llm_endpoint, **options})
    return LlmSettings.from_env(**options)


def make_agent(
    name: str, interface: str, config: Config, repeat: int, condition: str = "plain"
) -> Agent:
    if name == "llm":
        from experiment.agents.llm import LlmAgent

        return LlmAgent(llm_settings(config, condition), repeat=repeat)
    from experiment.agents.scripted_a import ScriptedStaticAgent
    from experiment.agents.scripted_b import ScriptedHybridAgent
    from experiment.agents.scripted_c import ScriptedFormsAgent

    agents: dict[str, type[Agent]] = {
        "A": ScriptedStaticAgent,
        "B": ScriptedHybridAgent,
        "B-compact": ScriptedHybridAgent,
        "C": ScriptedFormsAgent,
    }
    return agents[interface]()


class RunHooks:
    """The task's injection, run in the ORM thread at the moment the task names."""

    def __init__(self, task: Task, pks: Mapping[str, int], orm: ThreadPoolExecutor) -> None:
        self.task, self.pks, self.orm = task, pks, orm
        self.done = False
        self.undo: list[Callable[[], None]] = []
        self.injected_at: str | None = None

    async def _inject(self, moment: str) -> None:
        injection = self.task.injection
        assert injection is not None
        self.done = True
        undo = await asyncio.get_running_loop().run_in_executor(self.orm, injection.apply, self.pks)
        if undo is not None:
            self.undo.append(undo)
        self.injected_at = moment

    async def after_list_tools(self) -> None:
        injection = self.task.injection
        if injection is not None and not self.done and injection.when == "after_list_tools":
            await self._inject("after tools/list")

    async def before_call(self, name: str, arguments: dict[str, Any]) -> None:
        injection = self.task.injection
        if injection is None or self.done or injection.when != "before_write":
            return
        if name.startswith(("get_", "list_")) or name == "read_resource":
            return
        target = self.pks[injection.order] if injection.order else None
        url = str(arguments.get("url", ""))
        named = [value for key, value in arguments.items() if key.endswith("Id")]
        if target in named or url.rstrip("/").endswith(f"/{target}"):
            await self._inject(f"before {name}")


def _demo_pks() -> dict[str, int]:
    """Seed keys → ids: the demo orders (``demo-05``) and purchase requests (``pr-05``)."""
    from orders.models import Order
    from orders.services import DEMO_ORDERS
    from procurement.demo import DEMO_REQUESTS, demo_request

    orders = {
        spec.key: Order.objects.get(description=f"Demo order {spec.key}").pk for spec in DEMO_ORDERS
    }
    return {**orders, **{spec.key: demo_request(spec.key).pk for spec in DEMO_REQUESTS}}


def _token(username: str) -> str:
    from django.contrib.auth import get_user_model
    from rest_framework_simplejwt.tokens import AccessToken

    return str(AccessToken.for_user(get_user_model().objects.get(username=username)))


def _hidden_operations(username: str) -> list[Any]:
    from django.contrib.auth import get_user_model

    from affordances.catalog import get_catalog

    user = get_user_model().objects.get(username=username)
    return [op for op in get_catalog() if not op.permits(user)]


def ensure_demo_users() -> None:
    """The demo users, created once (their passwords are never used: tokens are minted)."""
    from django.contrib.auth import get_user_model

    from orders.services import DEMO_CUSTOMERS, DEMO_STAFF, seed_demo
    from procurement.demo import DEMO_USERS, seed_procurement_users

    usernames = {"admin", *DEMO_STAFF, *DEMO_CUSTOMERS}
    if get_user_model().objects.filter(username__in=usernames).count() < len(usernames):
        seed_demo(reset=True)
    if get_user_model().objects.filter(username__in=DEMO_USERS).count() < len(DEMO_USERS):
        seed_procurement_users(password=get_random_string(32))


def reset_demo_data() -> None:
    """The demo orders and purchase requests as seeded, before every run."""
    from orders.services import reset_demo_orders
    from procurement.demo import seed_procurement

    reset_demo_orders()
    seed_procurement(reset=True)


def _created_since(started: datetime) -> dict[str, int]:
    """``new:N`` → the id of the N-th object a create operation made since ``started``."""
    from affordances.catalog import get_catalog
    from affordances.models import AuditRecord

    creates = [op.name for op in get_catalog() if op.is_create]
    records = AuditRecord.objects.filter(created_at__gte=started, operation_name__in=creates)
    ids = records.order_by("id").values_list("object_id", flat=True)
    return {f"new:{n}": int(pk) for n, pk in enumerate(ids, start=1)}


def run_one(
    *,
    task: Task,
    interface: str,
    agent_name: str,
    repeat: int,
    base_url: str,
    config: Config,
    orm: ThreadPoolExecutor,
    condition: str = "plain",
) -> dict[str, Any]:
    reset_demo_data()
    pks = _demo_pks()
    # Traces of what none of the task's users may know about (a chain spans roles).
    hidden = [_hidden_operations(user) for user in task.users]
    from affordances.catalog import get_catalog

    never = [op for op in hidden[0] if all(op in h for h in hidden)]
    forbidden = forbidden_traces(never, [op for op in get_catalog() if op not in never])
    phases = [Phase(task.user, task.goal, task.steps), *task.phases]
    hooks = RunHooks(task, pks, orm)
    started: datetime = timezone.now()
    clock = time.perf_counter()
    sessions: list[McpSession] = []
    answers: list[str] = []
    error = None
    urlconf = override_settings(ROOT_URLCONF=task.urlconf) if task.urlconf else nullcontext()

    async def drive(session: McpSession, agent: Agent, brief: Brief) -> str:
        async with session:
            return await agent.run(session, brief)

    with urlconf:
        try:
            for phase in phases:
                known = {**pks, **_created_since(started)}
                brief = Brief(
                    task_id=task.id,
                    user=phase.user,
                    goal=fill_goal(phase.goal, known),
                    steps=phase.steps,
                    pks=known,
                    interface=interface,
                )
                agent = make_agent(agent_name, interface, config, repeat, condition)
                url = base_url + ENDPOINTS[interface]
                session = McpSession(url, _token(phase.user), hooks=hooks, mode=config.mode)
                sessions.append(session)
                answers.append(asyncio.run(drive(session, agent, brief)))
        except Exception as exc:  # a broken run is a failed run, with its reason kept
            error = "".join(traceback.format_exception_only(exc)).strip()
        finally:
            for undo in hooks.undo:
                orm.submit(undo).result()
    wall_ms = (time.perf_counter() - clock) * 1000
    answer = "\n".join(answers)

    check = Check(pks=pks, user=task.user, answer=answer, started=started)
    task.check(check)
    success = not check.failures and error is None
    metrics = combined(
        [
            measure(s.trace, forbidden=forbidden, success=success, tokenizer=get_tokenizer())
            for s in sessions
        ]
    )
    failures = list(check.failures)
    if error is not None:
        failures.insert(0, f"error: {error}")
    if task.requires_no_leaks and metrics.leaks:
        failures.append(f"{metrics.leaks} leak(s): {', '.join(metrics.leak_samples)}")
    run: dict[str, Any] = {
        "task": task.id,
        "interface": interface,
        "agent": agent_name,
        "condition": condition,
        "repeat": repeat,
        "success": not failures,
        "invalidTransitions": metrics.invalid_transitions,
        "calls": metrics.calls,
        "reads": metrics.reads,
        "contextBytes": metrics.context_bytes,
        "contextTokens": metrics.context_tokens,
        "staleConflicts": metrics.stale_conflicts,
        "staleRecovered": metrics.stale_recovered,
        "leaks": metrics.leaks,
        "latencyMs": metrics.latency_ms,
        "wallMs": round(wall_ms, 1),
        "toolLists": metrics.listings,
        "wireBytes": metrics.wire_bytes,
        "refusals": metrics.refusals,
        "failures": failures,
        "answer": answer,
    }
    if task.phases:
        run["sessions"] = len(sessions)
    if task.injection is not None:
        run["injected"] = hooks.injected_at
    if metrics.leak_samples:
        run["leakSamples"] = metrics.leak_samples
    if agent_name == "llm":
        settings = llm_settings(config, condition)
        run.update(
            llm_figures(sessions, model=settings.model, counted_schema=bool(settings.tokenize_url))
        )
        if "threads" in config.llm_meta:
            # A resumed run may have been continued with other threads: say per run.
            run["threads"] = config.llm_meta["threads"]
    return run


def llm_figures(sessions: list[McpSession], *, model: str, counted_schema: bool) -> dict[str, Any]:
    """What the model's server counted over a run's sessions (None: it did not say);
    ``model`` as the server named it, else as it was asked for."""

    def total(key: str) -> int | None:
        values = [s.trace.llm_usage[key] for s in sessions if key in s.trace.llm_usage]
        return sum(values) if values else None

    models = [s.trace.llm_model for s in sessions if s.trace.llm_model]
    return {
        "model": models[0] if models else model,
        "turns": sum(s.trace.llm_requests for s in sessions),
        "promptTokens": total("prompt"),
        "cachedPromptTokens": total("cached"),
        "completionTokens": total("completion"),
        "toolSchemaTokens": (
            sum(s.trace.llm_schema_tokens for s in sessions) if counted_schema else None
        ),
        "repairs": sum(s.trace.llm_repairs for s in sessions),
        "modelLatencyMs": round(sum(s.trace.llm_latency_ms for s in sessions), 1),
    }


def validate(config: Config) -> list[Task]:
    """The tasks to run; ValueError on an unknown task, interface, agent or condition, or
    a missing model."""
    tasks = select_tasks(config.tasks)
    for interface in config.interfaces:
        if interface not in ENDPOINTS:
            raise ValueError(f"Unknown interface {interface!r}: use {', '.join(ENDPOINTS)}.")
    for agent in config.agents:
        if agent not in AGENTS:
            raise ValueError(f"Unknown agent {agent!r}: use {' or '.join(AGENTS)}.")
    for condition in config.conditions:
        if condition not in CONDITIONS:
            raise ValueError(f"Unknown condition {condition!r}: use {', '.join(CONDITIONS)}.")
    if "llm" in config.agents:
        try:
            llm_settings(config)
        except RuntimeError as exc:
            raise ValueError(str(exc)) from exc
    return tasks


Slot = tuple[str, str, str, str, int]  # task, interface, agent, condition, repeat


def schedule(config: Config, tasks: list[Task]) -> list[Slot]:
    """Every run, in order: repeat by repeat, the tasks in an order drawn from the seed,
    and for each task every interface (agent, condition) in a drawn order too — so a run
    cut short has compared the interfaces on the same tasks, and no interface always
    comes first. Conditions apply to the model only; the scripted agents run plain."""
    arms = [
        (interface, agent, condition)
        for interface in config.interfaces
        for agent in config.agents
        for condition in (config.conditions if agent == "llm" else ("plain",))
    ]
    slots: list[Slot] = []
    for repeat in range(config.repeat):
        order = [task.id for task in tasks]
        random.Random(f"{config.seed}:{repeat}").shuffle(order)
        for task in order:
            drawn = list(arms)
            random.Random(f"{config.seed}:{repeat}:{task}").shuffle(drawn)
            slots.extend((task, i, agent, condition, repeat) for i, agent, condition in drawn)
    return slots


def _slot(run: Mapping[str, Any]) -> Slot:
    return (
        run["task"],
        run["interface"],
        run["agent"],
        run.get("condition", "plain"),
        run["repeat"],
    )


def _finished(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    runs = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                runs.append(json.loads(line))
            except ValueError:
                break  # a line cut short by an interruption: that run is run again
    return runs


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def run_experiment(
    config: Config,
    *,
    base_url: str | None = None,
    log: Callable[[str], None] = print,
    seconds_per_run: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Every task x interface x agent x condition x repeat; returns ``{"meta", "runs"}``.

    Each finished run is appended to ``out/runs.jsonl``; with ``config.resume`` the runs
    already there are kept and not run again, so a long run survives an interruption.
    ``seconds_per_run`` (per agent) gives the estimate printed before starting.
    """
    tasks = validate(config)
    by_id = {task.id: task for task in tasks}
    ensure_demo_users()
    config.out.mkdir(parents=True, exist_ok=True)
    journal = config.out / "runs.jsonl"
    slots = schedule(config, tasks)
    wanted = set(slots)
    kept = [run for run in _finished(journal) if _slot(run) in wanted] if config.resume else []
    done = {_slot(run) for run in kept}
    todo = [slot for slot in slots if slot not in done]
    with journal.open("w") as out:  # the kept runs only, then each new one as it ends
        out.writelines(json.dumps(run, ensure_ascii=False) + "\n" for run in kept)
    estimate = sum((seconds_per_run or {}).get(slot[2], 0.0) for slot in todo)
    log(
        f"{len(todo)} run(s) to do"
        + (f", {len(kept)} kept from {journal}" if kept else "")
        + (f"; estimated {_duration(estimate)}" if estimate else "")
    )
    runs: list[dict[str, Any]] = list(kept)
    started = time.perf_counter()
    orm = ThreadPoolExecutor(max_workers=1, thread_name_prefix="experiment-orm")
    server = live_server() if base_url is None else nullcontext(base_url)
    interrupted = False
    try:
        with server as url:
            for number, (task_id, interface, agent_name, condition, repeat) in enumerate(
                todo, start=1
            ):
                run = run_one(
                    task=by_id[task_id],
                    interface=interface,
                    agent_name=agent_name,
                    repeat=repeat,
                    base_url=url,
                    config=config,
                    orm=orm,
                    condition=condition,
                )
                runs.append(run)
                with journal.open("a") as out:
                    out.write(json.dumps(run, ensure_ascii=False) + "\n")
                elapsed = time.perf_counter() - started
                remaining = elapsed / number * (len(todo) - number)
                log(
                    f"[{number}/{len(todo)} {_duration(elapsed)} elapsed, "
                    f"~{_duration(remaining)} left] {_line(run)}"
                )
    except KeyboardInterrupt:
        # Ctrl-C (or SIGTERM, see run_experiment's command): the run in progress is
        # dropped, the finished ones — each already in the journal — are reported.
        interrupted = True
        log(f"Interrupted: {len(runs)} of {len(slots)} runs done.")
    finally:
        orm.submit(connections.close_all).result()
        orm.shutdown()
    order = {slot: index for index, slot in enumerate(slots)}
    runs.sort(key=lambda run: order[_slot(run)])
    meta: dict[str, Any] = {
        "interfaces": {i: INTERFACE_NAMES[i] for i in config.interfaces},
        "tasks": {t.id: t.title for t in tasks},
        "agents": list(config.agents),
        "conditions": list(config.conditions),
        "repeat": config.repeat,
        "seed": config.seed,
        "protocol": config.mode,
        "tokenizer": get_tokenizer().method,
        "wallSeconds": round(time.perf_counter() - started, 1),
        "plannedRuns": len(slots),
        "complete": not interrupted and len(runs) == len(slots),
    }
    if kept:
        meta["resumedRuns"] = len(kept)
        # wallSeconds is this session's; a resumed run's time is the sum of its runs'.
        meta["runSeconds"] = round(sum(run.get("wallMs", 0) for run in runs) / 1000, 1)
    if "llm" in config.agents:
        settings = llm_settings(config)
        from experiment.agents.llm import SYSTEM_PROMPT

        meta["llm"] = {
            "model": settings.model,
            # Which prompt: runs made with another are not comparable with these.
            "systemPrompt": hashlib.sha256(SYSTEM_PROMPT.encode()).hexdigest()[:12],
            "maxSteps": config.max_steps,
            "maxTokens": settings.max_tokens,
            "temperature": settings.temperature,
            "distractors": config.distractors,
            **config.llm_meta,
        }
    return {"meta": meta, "runs": runs}


def _line(run: dict[str, Any]) -> str:
    mark = "ok  " if run["success"] else "FAIL"
    condition = "" if run.get("condition", "plain") == "plain" else f" [{run['condition']}]"
    model = ""
    if run["agent"] == "llm":
        model = (
            f" turns={run['turns']} prompt={run['promptTokens']} "
            f"cached={run['cachedPromptTokens']} repairs={run['repairs']}"
        )
    return (
        f"{mark} {run['task']:<3} {run['interface']} {run['agent']:<8}{condition} "
        f"#{run['repeat']} invalid={run['invalidTransitions']} calls={run['calls']} "
        f"reads={run['reads']} stale={run['staleConflicts']}/{run['staleRecovered']} "
        f"leaks={run['leaks']}"
        + model
        + (f"  {'; '.join(run['failures'])}" if run["failures"] else "")
    )
