"""Run tasks x interfaces x agents x repeats against a live server; collect the runs.

Per run: reset the demo orders, give the agent a session as the task's user on the
interface's endpoint, let the runner change the world where the task says so, then
check the database and measure the recorded traffic. The ORM is used only outside the
event loop: before and after a run in this thread, during a run in one worker thread.
"""

from __future__ import annotations

import asyncio
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

__all__ = ["ENDPOINTS", "Config", "live_server", "run_experiment", "select_tasks"]

ENDPOINTS = {"A": "/mcp/static", "B": "/mcp", "C": "/mcp/forms"}
INTERFACE_NAMES = {"A": "static", "B": "hybrid", "C": "forms"}
AGENTS = ("scripted", "llm")


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
    scramble_names: bool = False
    distractors: int = 0
    llm_options: Mapping[str, Any] = field(default_factory=dict)


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


def make_agent(name: str, interface: str, config: Config, repeat: int) -> Agent:
    if name == "llm":
        from experiment.agents.llm import LlmAgent, LlmSettings

        settings = LlmSettings.from_env(
            max_steps=config.max_steps,
            scramble_names=config.scramble_names,
            distractors=config.distractors,
            seed=config.seed,
            **config.llm_options,
        )
        return LlmAgent(settings, repeat=repeat)
    from experiment.agents.scripted_a import ScriptedStaticAgent
    from experiment.agents.scripted_b import ScriptedHybridAgent
    from experiment.agents.scripted_c import ScriptedFormsAgent

    return {"A": ScriptedStaticAgent, "B": ScriptedHybridAgent, "C": ScriptedFormsAgent}[
        interface
    ]()


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
                agent = make_agent(agent_name, interface, config, repeat)
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
    requests = sum(s.trace.llm_requests for s in sessions)
    if requests:
        usage: dict[str, int] = {}
        for s in sessions:
            for key, value in s.trace.llm_usage.items():
                usage[key] = usage.get(key, 0) + value
        run["llm"] = {"requests": requests, "usage": usage}
    return run


def validate(config: Config) -> list[Task]:
    """The tasks to run; ValueError on an unknown task, interface or agent, or a missing model."""
    tasks = select_tasks(config.tasks)
    for interface in config.interfaces:
        if interface not in ENDPOINTS:
            raise ValueError(f"Unknown interface {interface!r}: use A, B and/or C.")
    for agent in config.agents:
        if agent not in AGENTS:
            raise ValueError(f"Unknown agent {agent!r}: use {' or '.join(AGENTS)}.")
    if "llm" in config.agents:
        from experiment.agents.llm import LlmSettings

        try:
            LlmSettings.from_env()
        except RuntimeError as exc:
            raise ValueError(str(exc)) from exc
    return tasks


def run_experiment(
    config: Config,
    *,
    base_url: str | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Every task x interface x agent x repeat; returns ``{"meta", "runs"}``."""
    tasks = validate(config)
    ensure_demo_users()
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    orm = ThreadPoolExecutor(max_workers=1, thread_name_prefix="experiment-orm")
    server = live_server() if base_url is None else nullcontext(base_url)
    try:
        with server as url:
            for task in tasks:
                for interface in config.interfaces:
                    for agent_name in config.agents:
                        for repeat in range(config.repeat):
                            run = run_one(
                                task=task,
                                interface=interface,
                                agent_name=agent_name,
                                repeat=repeat,
                                base_url=url,
                                config=config,
                                orm=orm,
                            )
                            runs.append(run)
                            log(_line(run))
    finally:
        orm.submit(connections.close_all).result()
        orm.shutdown()
    meta = {
        "interfaces": {i: INTERFACE_NAMES[i] for i in config.interfaces},
        "tasks": {t.id: t.title for t in tasks},
        "agents": list(config.agents),
        "repeat": config.repeat,
        "seed": config.seed,
        "protocol": config.mode,
        "tokenizer": get_tokenizer().method,
        "wallSeconds": round(time.perf_counter() - started, 1),
    }
    if "llm" in config.agents:
        import os

        meta["llm"] = {
            "model": os.environ.get("OPENAI_MODEL"),
            "maxSteps": config.max_steps,
            "scrambleNames": config.scramble_names,
            "distractors": config.distractors,
        }
    return {"meta": meta, "runs": runs}


def _line(run: dict[str, Any]) -> str:
    mark = "ok  " if run["success"] else "FAIL"
    return (
        f"{mark} {run['task']:<3} {run['interface']} {run['agent']:<8} #{run['repeat']} "
        f"invalid={run['invalidTransitions']} calls={run['calls']} reads={run['reads']} "
        f"stale={run['staleConflicts']}/{run['staleRecovered']} leaks={run['leaks']}"
        + (f"  {'; '.join(run['failures'])}" if run["failures"] else "")
    )
