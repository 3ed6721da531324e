"""Run tasks x interfaces x agents x repeats against a live server; collect the runs.

Per run: reset the demo orders, give the agent a session as the task's user on the
interface's endpoint, let the runner change the world where the task says so, then
check the database and measure the recorded traffic. The ORM is used only outside the
event loop: before and after a run in this thread, during a run in one worker thread.

Every run is appended to ``runs.jsonl`` as it ends, with what reproduces it — the
commit (``git rev-parse HEAD``, or ``unknown`` outside a checkout) and a digest of the
code the run executed, the seed, the model server's threads, and that the server asked
for no confirmation (:data:`SERVER_SETTINGS`) — and its transcript is
written to ``transcripts/`` (every MCP request and response, and for a model every
chat request and response it saw).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import random
import subprocess
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
from experiment.metrics import CAUSES, Change, combined, forbidden_traces, measure
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

ENDPOINTS = {
    "A": "/mcp/static",
    "B": "/mcp",
    "B-compact": "/mcp/compact",
    # B's server; the host shows the model only the tools in focus (experiment.host).
    "B-focus": "/mcp",
    "C": "/mcp/forms",
}
INTERFACE_NAMES = {
    "A": "static",
    "B": "hybrid",
    "B-compact": "compact",
    "B-focus": "hybrid, focused host",
    "C": "forms",
}
# scripted: the baselines; llm: a model; oracle: the llm agent's code path with the
# scripted solution as its model; idle: answers at once; stuffing: answers at once with
# every reason there is (controls, see experiment.agents).
AGENTS = ("scripted", "llm", "oracle", "idle", "stuffing")
# The agents that run under the ToolSandbox-style conditions (the model's tool list).
MODEL_AGENTS = ("llm",)
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
    # The oracle writes its calls into the answer's text (as small models do).
    oracle_text_calls: bool = False


def select_tasks(ids: tuple[str, ...]) -> list[Task]:
    by_id = {task.id: task for task in TASKS}
    unknown = [task_id for task_id in ids if task_id not in by_id]
    if unknown:
        raise ValueError(f"Unknown task(s): {', '.join(unknown)}. Known: {', '.join(by_id)}.")
    return [by_id[task_id] for task_id in ids]


# The experiment's server has nobody to ask: an ``@operation(confirm=True)`` (the demo's
# cancel, refund and rejection) runs without asking for a confirmation, as in every
# pre-registered run (a client that cannot answer a form elicitation would otherwise be
# refused with ``confirmation_required``). Each run records it (:func:`provenance`).
SERVER_SETTINGS: dict[str, Any] = {"CONFIRMATIONS": False}


@contextmanager
def server_settings() -> Iterator[None]:
    """The experiment's server settings (:data:`SERVER_SETTINGS`) over the project's
    ``AFFORDANCES``, for every thread of this process: the live server's too."""
    from django.conf import settings

    current = dict(getattr(settings, "AFFORDANCES", None) or {})
    with override_settings(AFFORDANCES={**current, **SERVER_SETTINGS}):
        yield


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
    if name == "oracle":
        from experiment.agents.oracle import OracleAgent, oracle_settings

        settings = oracle_settings(max_steps=config.max_steps, seed=config.seed)
        return OracleAgent(settings, repeat=repeat, text_calls=config.oracle_text_calls)
    if name == "idle":
        from experiment.agents.idle import IdleAgent

        return IdleAgent()
    if name == "stuffing":
        from experiment.agents.stuffing import StuffingAgent

        return StuffingAgent()
    from experiment.agents.oracle import scripted_for

    # Scripted agents have no host: on B-focus they are B's.
    return scripted_for(interface)


class RunHooks:
    """The task's injection, run in the ORM thread at the moment the task names.

    It records what the change did to the object the task names (:class:`Change`):
    its version and the operations the session's user could run on it just before, so
    the metrics can tell a real conflict from a version the agent made up.
    """

    def __init__(self, task: Task, pks: Mapping[str, int], orm: ThreadPoolExecutor) -> None:
        self.task, self.pks, self.orm = task, pks, orm
        self.done = False
        self.undo: list[Callable[[], None]] = []
        self.injected_at: str | None = None
        # The session in progress and its user (set by the runner for each phase).
        self.session: McpSession | None = None
        self.user: str = task.user
        self.changes: dict[int, list[Change]] = {}

    async def _inject(self, moment: str) -> None:
        injection = self.task.injection
        assert injection is not None
        self.done = True
        loop = asyncio.get_running_loop()
        at = len(self.session.trace.exchanges) if self.session is not None else 0
        before = None
        if injection.order is not None:
            before = await loop.run_in_executor(
                self.orm, _object_facts, injection.order, self.pks[injection.order], self.user
            )
        undo = await loop.run_in_executor(self.orm, injection.apply, self.pks)
        if undo is not None:
            self.undo.append(undo)
        self.injected_at = moment
        if before is not None:
            resource, pk, path, version, available = before
            change = Change(resource, pk, path, version, available, at)
            self.changes.setdefault(id(self.session), []).append(change)

    def changes_in(self, session: McpSession) -> list[Change]:
        return self.changes.get(id(session), [])

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


def _object_facts(key: str, pk: int, username: str) -> tuple[str, int, str, int, frozenset]:
    """(resource, id, URL path, version, operations ``username`` may run on it now) of
    the demo object ``key`` (``demo-05`` an order, ``pr-05`` a purchase request)."""
    from django.contrib.auth import get_user_model

    from affordances import routes
    from affordances.catalog import get_catalog
    from affordances.evaluation import Available, evaluate
    from orders.models import Order
    from procurement.models import PurchaseRequest

    model = Order if key.startswith("demo-") else PurchaseRequest
    instance = model.objects.get(pk=pk)
    user = get_user_model().objects.get(username=username)
    catalog = get_catalog()
    resource = catalog.registered(model)
    available = frozenset(
        operation.name
        for operation in catalog.transitions_for(model)
        if isinstance(evaluate(operation, instance, user), Available)
    )
    path = routes.detail_path(resource, pk)
    assert path is not None, resource.basename
    return resource.name, pk, path, int(instance.version), available


def _demo_pks() -> dict[str, int]:
    """Seed keys → ids: the demo orders (``demo-05``) and purchase requests (``pr-05``)."""
    from orders.models import Order
    from orders.services import DEMO_ORDERS
    from procurement.demo import DEMO_REQUESTS, title
    from procurement.models import PurchaseRequest

    # Two queries, not one per object: this runs before every run.
    descriptions = {f"Demo order {spec.key}": spec.key for spec in DEMO_ORDERS}
    titles = {title(spec): spec.key for spec in DEMO_REQUESTS}
    found = [
        (descriptions[description], pk)
        for description, pk in Order.objects.filter(description__in=descriptions).values_list(
            "description", "pk"
        )
    ] + [
        (titles[name], pk)
        for name, pk in PurchaseRequest.objects.filter(title__in=titles).values_list("title", "pk")
    ]
    pks = dict(found)
    if len(found) != len(descriptions) + len(titles) or len(pks) != len(found):
        raise LookupError("The demo data is not as seeded: run reset_demo_data() first.")
    return pks


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
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    from experiment.agents.llm import ModelUnavailable

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
    briefs: list[Brief] = []
    answers: list[str] = []
    error = None
    infrastructure = None
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
                briefs.append(brief)
                agent = make_agent(agent_name, interface, config, repeat, condition)
                url = base_url + ENDPOINTS[interface]
                session = McpSession(url, _token(phase.user), hooks=hooks, mode=config.mode)
                sessions.append(session)
                hooks.session, hooks.user = session, phase.user
                answers.append(asyncio.run(drive(session, agent, brief)))
        except ModelUnavailable as exc:  # not the interface's doing: done again on resume
            infrastructure = str(exc)
            error = f"model unavailable: {exc}"
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
            measure(
                s.trace,
                forbidden=forbidden,
                success=success,
                tokenizer=get_tokenizer(),
                changes=hooks.changes_in(s),
            )
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
        "refusedWrites": metrics.refused,
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
        **(provenance or {}),
    }
    if infrastructure is not None:
        run["infrastructureError"] = infrastructure
    if task.phases:
        run["sessions"] = len(sessions)
    if task.injection is not None:
        run["injected"] = hooks.injected_at
    if metrics.leak_samples:
        run["leakSamples"] = metrics.leak_samples
    if agent_name in ("llm", "oracle"):
        run.update(
            llm_figures(
                sessions,
                model=_model_name(config, agent_name, condition),
                counted_schema=agent_name == "llm"
                and bool(llm_settings(config, condition).tokenize_url),
            )
        )
    run["transcript"] = write_transcript(config.out, run, sessions, briefs)
    return run


def _model_name(config: Config, agent_name: str, condition: str) -> str:
    if agent_name == "oracle":
        from experiment.agents.oracle import ORACLE_MODEL

        return ORACLE_MODEL
    return llm_settings(config, condition).model


def slot_name(run: Mapping[str, Any]) -> str:
    """A run's file name stem: ``S1_B-focus_llm_plain_r2``."""
    parts = (run["task"], run["interface"], run["agent"], run.get("condition", "plain"))
    return "_".join(str(part).replace("+", "-") for part in parts) + f"_r{run['repeat']}"


def _exchange_record(exchange: Any) -> dict[str, Any]:
    try:
        answer: Any = json.loads(exchange.body) if exchange.body else None
    except ValueError:
        answer = exchange.body.decode("utf-8", errors="replace")
    return {
        "method": exchange.method,
        "params": exchange.params,
        "status": exchange.status,
        "latencyMs": round(exchange.latency_ms, 1),
        "response": answer,
    }


def write_transcript(
    out: Path, run: Mapping[str, Any], sessions: list[McpSession], briefs: list[Brief]
) -> str:
    """``out/transcripts/<slot>.json.gz``: per session the brief, every MCP request and
    response, the local refusals, and (LLM agents) the model's conversation — every
    request it was sent (a prefix of ``messages`` and one of ``tools``) and every
    response. Returns the path relative to ``out``."""
    folder = out / "transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slot_name(run)}.json.gz"
    record = {
        "run": {key: run[key] for key in ("task", "interface", "agent", "condition", "repeat")},
        "success": run["success"],
        "failures": run["failures"],
        "sessions": [
            {
                "user": brief.user,
                "goal": brief.goal,
                "instructions": session.trace.instructions,
                "exchanges": [_exchange_record(e) for e in session.trace.exchanges],
                "localRefusals": [
                    {"name": name, "why": why, "at": at}
                    for (name, why), at in zip(
                        session.trace.local_refusals, session.trace.local_refusal_at, strict=True
                    )
                ],
                "conversation": session.trace.conversation,
            }
            for session, brief in zip(sessions, briefs, strict=False)
        ],
    }
    data = json.dumps(record, ensure_ascii=False, default=str).encode()
    # mtime 0: the same transcript gives the same bytes (diffs show only real changes).
    path.write_bytes(gzip.compress(data, mtime=0))
    return str(path.relative_to(out))


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
        "unparsedCalls": sum(s.trace.llm_unparsed for s in sessions),
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
            raise ValueError(f"Unknown agent {agent!r}: use {', '.join(AGENTS)}.")
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
    comes first. Conditions apply to the model only; the other agents run plain. A task
    runs only on the interfaces it is meant for (``Task.interfaces``: S5 differs from S1
    only where URLs are followed)."""
    arms = [
        (interface, agent, condition)
        for interface in config.interfaces
        for agent in config.agents
        for condition in (config.conditions if agent in MODEL_AGENTS else ("plain",))
    ]
    runs_on = {task.id: task.interfaces for task in tasks}
    slots: list[Slot] = []
    for repeat in range(config.repeat):
        order = [task.id for task in tasks]
        random.Random(f"{config.seed}:{repeat}").shuffle(order)
        for task in order:
            where = runs_on[task]
            drawn = [arm for arm in arms if where is None or arm[0] in where]
            random.Random(f"{config.seed}:{repeat}:{task}").shuffle(drawn)
            slots.extend((task, i, agent, condition, repeat) for i, agent, condition in drawn)
    return slots


ROOT = Path(__file__).resolve().parents[1]
# What a run executes: the library, the demo project and apps, the experiment.
CODE = ("affordances", "config", "experiment", "orders", "procurement", "templates")


def _git(*arguments: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def code_digest() -> str:
    """A digest of the code a run executes (every file under :data:`CODE`, by path and
    content): the same digest, the same code — also outside a checkout, and whatever
    else a commit holds (a checkpoint of runs.jsonl changes the commit, not this)."""
    digest = hashlib.sha256()
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def provenance(config: Config) -> dict[str, Any]:
    """What each run records to be reproduced: the commit (``unknown`` outside a
    checkout; ``+dirty`` when the code differs from it), the code's digest, the seed,
    the model server's threads (None without a local model), the host's wording and
    whether the server asked for confirmations (False: :data:`SERVER_SETTINGS`)."""
    from experiment.host import host_version

    commit = _git("rev-parse", "HEAD") or "unknown"
    if commit != "unknown" and _git("status", "--porcelain", "--untracked-files=no", "--", *CODE):
        commit += "+dirty"
    return {
        "commit": commit,
        "code": code_digest(),
        "seed": config.seed,
        "threads": config.llm_meta.get("threads"),
        "host": host_version(),
        "confirmations": SERVER_SETTINGS["CONFIRMATIONS"],
    }


# Runs made under other values of these do not compare: --resume will not mix them.
COMPARABLE = ("code", "seed", "threads", "host", "confirmations")


def _mixed(kept: list[dict[str, Any]], now: Mapping[str, Any]) -> list[str]:
    """What the kept runs were made with that differs from now (runs without a record
    of it, from before it was recorded, differ too)."""
    differ = []
    for key in COMPARABLE:
        seen = {json.dumps(run.get(key, "not recorded")) for run in kept}
        if seen - {json.dumps(now[key])}:
            differ.append(f"{key} {', '.join(sorted(seen))} (now {json.dumps(now[key])})")
    return differ


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
    facts = provenance(config)
    kept = []
    if config.resume:
        # A run the model's endpoint failed is done again; it never counted.
        kept = [
            run
            for run in _finished(journal)
            if _slot(run) in wanted and not run.get("infrastructureError")
        ]
        differ = _mixed(kept, facts)
        if differ:
            raise ValueError(
                f"{journal} holds runs made with other settings: {'; '.join(differ)}. "
                "Resume them from the same code and settings (a git worktree of their "
                "commit), or start another --out."
            )
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
        with server_settings(), server as url:
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
                    provenance=facts,
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
        "taskInterfaces": {t.id: list(t.interfaces) for t in tasks if t.interfaces},
        "agents": list(config.agents),
        "conditions": list(config.conditions),
        "repeat": config.repeat,
        "seed": config.seed,
        "protocol": config.mode,
        "tokenizer": get_tokenizer().method,
        "wallSeconds": round(time.perf_counter() - started, 1),
        "plannedRuns": len(slots),
        "complete": not interrupted and len(runs) == len(slots),
        # What the runs were made with: one value each, unless something was mixed.
        "provenance": {
            key: sorted({str(run.get(key)) for run in runs} or {str(value)})
            for key, value in facts.items()
        },
        "refusalCauses": list(CAUSES),
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
            "host": facts["host"],
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
    if run["agent"] in ("llm", "oracle"):
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
