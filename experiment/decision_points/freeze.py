"""The items of the decision-point study, taken once from the oracle's B trajectories and
frozen with every prompt each arm will send.

The oracle (the LLM agent's code path, its model the scripted B agent) runs every task
on B (N1 left out: its server changes its tool list while declaring it will not — it
comes back once the live-affordances announcement lands). In each conversation a
*decision point* is a model turn right after the read of an object:

- the oracle then writes on that object (not a create: nothing is read before one) —
  a **write item**, expected: that call;
- or it does not, and one of the task's operations it never performs on that object is
  unavailable there (its ``reason``), or P9's refund is above the amount's ``maximum``
  — a **trap item**, expected: no write, and the reason (or, where the oracle read
  another object next, moving on).

The read is the model's last turn: where the oracle had just written or created the
object instead, the host adds a ``get`` of it whose result is the object as that write
returned it (nothing changed in between). Each item keeps what scoring needs (the
oracle's call or reasons, the object's id and version, its affordances and their
constraints as B states them, the schemas of the user's tools).

The live server's origin is written as one fixed origin (:data:`ORIGIN`), so the frozen
conversations do not depend on the port it happened to have; the server runs with the
experiment's settings (no confirmations, ``runner.SERVER_SETTINGS``).

:func:`freeze` writes, into the study's folder, ``items.json``, ``prompts.jsonl`` (per
item and arm the messages and the digest of the tools) and ``tools.json``; their
sha256s go into the pre-registration (``MANIFEST.json``).
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiment.agents.base import id_argument
from experiment.client import McpSession, tool_definitions
from experiment.decision_points.arms import (
    ARMS,
    LISTS,
    donor_for,
    focus_tools,
    system_message,
    transform,
)
from experiment.decision_points.scoring import is_read, score
from experiment.host import neutral_definitions
from experiment.suite import TASKS
from experiment.tasks import ANY, Act, Task

__all__ = ["CONSTRAINT_REASONS", "EXCLUDED_TASKS", "digest", "extract", "freeze", "items_table"]

# Left out: N1 (see the module's docstring); S5 runs on C only.
EXCLUDED_TASKS = ("N1",)
# Traps where the operation applies but the task's value is outside its constraints.
CONSTRAINT_REASONS = {("P9", "refund_order"): "refund_above_total"}
FILES = ("items.json", "prompts.jsonl", "tools.json")
# The origin the frozen conversations show, whatever port the live server had.
ORIGIN = "http://127.0.0.1:8000"


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _body(message: dict[str, Any]) -> Any:
    try:
        return json.loads(message.get("content") or "")
    except ValueError:
        return None


def _calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (c["function"]["name"], json.loads(c["function"].get("arguments") or "{}"))
        for c in message.get("tool_calls") or []
    ]


def _acts(task: Task) -> list[Act]:
    steps = [*task.steps, *(step for phase in task.phases for step in phase.steps)]
    return [step for step in steps if isinstance(step, Act)]


def _resource_of(tool: str) -> str:
    return "purchase_request" if tool.endswith("_purchase_request") else "order"


def _latest(prefix: list[dict[str, Any]], pk: int) -> tuple[int, dict[str, Any]] | None:
    """The index of the last tool result in ``prefix`` that is object ``pk``, and it."""
    for index in range(len(prefix) - 1, -1, -1):
        message = prefix[index]
        body = _body(message) if message["role"] == "tool" else None
        if isinstance(body, dict) and body.get("id") == pk and "affordances" in body:
            return index, body
    return None


def _call_of(prefix: list[dict[str, Any]], tool_message: dict[str, Any]) -> tuple[str, dict]:
    for message in reversed(prefix):
        for call in message.get("tool_calls") or []:
            if call.get("id") == tool_message.get("tool_call_id"):
                return call["function"]["name"], json.loads(call["function"]["arguments"])
    raise LookupError("a tool result without its call")


def _with_read(
    prefix: list[dict[str, Any]], resource: str, rep: dict[str, Any]
) -> list[dict[str, Any]]:
    """``prefix`` ending with the read of ``rep``: as it is if its last turn is one, else
    with the host's ``get`` of it added."""
    last = prefix[-1]
    if last["role"] == "tool" and _body(last) == rep:
        name, _ = _call_of(prefix, last)
        if name == f"get_{resource}":
            return prefix
    call_id = f"host-read-{rep['id']}"
    arguments = json.dumps({id_argument(resource): rep["id"]})
    return [
        *prefix,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": f"get_{resource}", "arguments": arguments},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": call_id,
            "content": json.dumps(rep, separators=(",", ":"), ensure_ascii=False),
        },
    ]


def extract(
    task: Task, session: int, user: str, conversation: dict[str, Any], server: list[dict]
) -> list[dict[str, Any]]:
    """The decision points of one oracle conversation (see the module's docstring)."""
    messages = conversation["messages"]
    catalog = [tool["name"] for tool in server]
    schemas = {tool["name"]: tool.get("inputSchema") or {} for tool in server}
    acts = _acts(task)
    written: set[tuple[str, int]] = set()
    for request in conversation["requests"]:
        for name, arguments in _calls(request["response"]):
            for key, value in arguments.items():
                if key.endswith("Id") and isinstance(value, int):
                    written.add((name, value))
    items: list[dict[str, Any]] = []
    for request in conversation["requests"]:
        prefix = messages[: request["messages"]]
        last = prefix[-1]
        if last["role"] != "tool":
            continue
        response = request["response"]
        calls = _calls(response)
        writes = [(n, a) for n, a in calls if not is_read(n)]
        item: dict[str, Any] | None = None
        if writes:
            name, arguments = writes[0]
            if name.startswith("create_"):
                continue
            resource = _resource_of(name)
            pk = arguments[id_argument(resource)]
            found = _latest(prefix, pk)
            assert found is not None, (task.id, name, pk)
            rep = found[1]
            accepted: dict[str, Any] = {}
            for step in acts:
                if step.tool == name:
                    for key, also in step.fallbacks.items():
                        accepted[key] = (
                            "any"
                            if also == ANY
                            else sorted({*accepted.get(key, []), *also, step.arguments[key]})
                        )
            item = {
                "kind": "write",
                "expected": {
                    "tool": name,
                    "arguments": {
                        k: v
                        for k, v in arguments.items()
                        if k not in (id_argument(resource), "expectedVersion")
                    },
                    "accepted": accepted,
                },
            }
        else:
            body = _body(last)
            if not (isinstance(body, dict) and "affordances" in body):
                continue
            made_by, _ = _call_of(prefix, last)
            if not (is_read(made_by) or made_by.startswith("create_")):
                continue  # the oracle had just acted on it: no decision about it now
            rep = body
            resource = _resource_of(made_by)
            unavailable = {
                e["name"]: e.get("reason") for e in rep.get("unavailableAffordances", [])
            }
            available = {e["name"] for e in rep.get("affordances", [])}
            reasons = []
            for step in acts:
                if step.resource != resource or (step.tool, rep["id"]) in written:
                    continue
                if unavailable.get(step.tool):
                    reasons.append(unavailable[step.tool])
                elif step.tool in available and (task.id, step.tool) in CONSTRAINT_REASONS:
                    reasons.append(CONSTRAINT_REASONS[(task.id, step.tool)])
            if not reasons:
                continue
            item = {
                "kind": "trap",
                "expected": {
                    "reasons": sorted(set(reasons)),
                    "movesOn": bool(calls),
                },
            }
        prefix = _with_read(prefix, resource, rep)
        item.update(
            {
                "task": task.id,
                "session": session,
                "turn": request["turn"],
                "user": user,
                "object": {
                    "resource": resource,
                    "id": rep["id"],
                    "idArgument": id_argument(resource),
                    "version": rep.get("version"),
                    "status": rep.get("status"),
                },
                "available": {e["name"]: e.get("constraints") or {} for e in rep["affordances"]},
                "unavailable": {
                    e["name"]: e.get("reason") for e in rep.get("unavailableAffordances", [])
                },
                "catalog": catalog,
                "schemas": {name: schemas[name] for name in catalog if not is_read(name)},
                "oracle": response,
                "prefix": prefix[1:],  # without the system message: each arm has its own
            }
        )
        items.append(item)
    # A trap's answer may give the session's other reasons and the object's own.
    session_reasons = {r for i in items if i["kind"] == "trap" for r in i["expected"]["reasons"]}
    for item in items:
        if item["kind"] == "trap":
            item["expected"]["allowed"] = sorted(
                session_reasons | {r for r in item["unavailable"].values() if r}
            )
    return items


def _donors(pools: dict[tuple[str, str], list[dict[str, Any]]], user: str) -> Callable:
    def donor(rep: dict[str, Any]) -> dict[str, Any] | None:
        resource = "purchase_request" if "requester" in rep or "costCenter" in rep else "order"
        return donor_for(rep, pools.get((user, resource), []))

    return donor


def build_prompts(
    items: list[dict[str, Any]],
    tools: dict[tuple[str, str], list[dict[str, Any]]],
    server: dict[str, list[dict[str, Any]]],
    pools: dict[tuple[str, str], list[dict[str, Any]]],
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Per item and arm the messages the model is sent and its tools (by digest)."""
    prompts: list[dict[str, Any]] = []
    table: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        user = item["user"]
        donors = _donors(pools, user)
        for arm in ARMS:
            messages = [{"role": "system", "content": system_message(arm)}]
            for message in item["prefix"]:
                if message["role"] == "tool":
                    message = {**message, "content": transform(message["content"], arm, donors)}
                messages.append(message)
            if arm == "A":
                definitions = tools[("A", user)]
            elif arm == "B-focus":
                read = [_body(m) for m in item["prefix"] if m["role"] == "tool"]
                definitions = focus_tools(tools[("B", user)], server[user], read)
            else:
                definitions = tools[("B", user)]
            key = digest(definitions)[:16]
            table[key] = definitions
            prompt = {"item": item["id"], "arm": arm, "messages": messages, "tools": key}
            prompt["sha256"] = digest(prompt)
            prompts.append(prompt)
    return prompts, table


async def _list(url: str, token: str) -> list[dict[str, Any]]:
    async with McpSession(url, token) as session:
        return await session.list_tools()


async def _read_all(url: str, token: str, resource: str, ids: list[int]) -> list[dict]:
    found = []
    async with McpSession(url, token) as session:
        for pk in ids:
            outcome = await session.call(f"get_{resource}", {id_argument(resource): pk})
            if outcome.ok and isinstance(outcome.body, dict):
                found.append(outcome.body)
    return found


def freeze(out: Path, *, base_url: str, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the oracle on B, take the items, write the frozen files into ``out``; returns
    the manifest (files and item hashes). The server runs with the experiment's settings
    (``runner.SERVER_SETTINGS``: no confirmations), which the manifest records."""
    from experiment import runner

    with runner.server_settings():
        return _freeze(out, base_url=base_url, log=log)


def _freeze(out: Path, *, base_url: str, log: Callable[[str], None]) -> dict[str, Any]:
    from experiment import runner

    tasks = tuple(
        t.id
        for t in TASKS
        if t.id not in EXCLUDED_TASKS and (t.interfaces is None or "B" in t.interfaces)
    )
    with tempfile.TemporaryDirectory(prefix="decision-points-") as folder:
        config = runner.Config(
            tasks=tasks, interfaces=("B",), agents=("oracle",), out=Path(folder), seed=0
        )
        results = runner.run_experiment(config, base_url=base_url, log=log)
        failed = [r["task"] for r in results["runs"] if not r["success"]]
        if failed:
            raise RuntimeError(f"The oracle failed {failed} on B: no items from a broken run.")
        transcripts = {
            r["task"]: json.loads(gzip.decompress((Path(folder) / r["transcript"]).read_bytes()))
            for r in results["runs"]
        }
    by_id = {t.id: t for t in TASKS}
    users = sorted({s["user"] for t in transcripts.values() for s in t["sessions"]})
    server: dict[str, list[dict[str, Any]]] = {}
    tools: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for user in users:
        token = runner._token(user)
        for arm, path in (("A", runner.ENDPOINTS["A"]), ("B", runner.ENDPOINTS["B"])):
            listed = asyncio.run(_list(base_url + path, token))
            if arm == "B":
                server[user] = listed
            tools[(arm, user)] = neutral_definitions(tool_definitions(listed), listed)
    # B-wrong's donors: every demo object each user may read, as B shows it, seeded.
    runner.reset_demo_data()
    pks = runner._demo_pks()
    pools: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for user in users:
        token = runner._token(user)
        for resource, prefix in (("order", "demo-"), ("purchase_request", "pr-")):
            ids = [pk for key, pk in sorted(pks.items()) if key.startswith(prefix)]
            pools[(user, resource)] = asyncio.run(
                _read_all(base_url + runner.ENDPOINTS["B"], token, resource, ids)
            )
    items: list[dict[str, Any]] = []
    for task_id in tasks:
        for index, session in enumerate(transcripts[task_id]["sessions"]):
            found = extract(
                by_id[task_id],
                index,
                session["user"],
                session["conversation"],
                server[session["user"]],
            )
            for number, item in enumerate(found, start=1):
                item["id"] = f"{task_id}.{index}.{number}"
            items.extend(found)

    # The live server's origin (a free port, another each time) as one fixed origin: a
    # freeze again differs only in the objects' timestamps.
    def fixed(value: Any) -> Any:
        return json.loads(json.dumps(value).replace(base_url.rstrip("/"), ORIGIN))

    items = fixed(items)
    pools = {key: fixed(found) for key, found in pools.items()}
    for item in items:
        item["sha256"] = digest({k: v for k, v in item.items() if k != "sha256"})
        # The scorer's check: the oracle's own completion is correct.
        if not score(item, item["oracle"])["correct"]:
            raise RuntimeError(f"The scorer does not pass the oracle on {item['id']}.")
    prompts, table = build_prompts(items, tools, server, pools)
    out.mkdir(parents=True, exist_ok=True)
    (out / "items.json").write_text(json.dumps(items, indent=1, ensure_ascii=False) + "\n")
    (out / "prompts.jsonl").write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts)
    )
    (out / "tools.json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    manifest = {
        "files": {name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in FILES},
        "items": {item["id"]: item["sha256"] for item in items},
        "kinds": {kind: sum(1 for i in items if i["kind"] == kind) for kind in ("write", "trap")},
        "arms": list(ARMS),
        "lists": list(LISTS),
        "server": dict(runner.SERVER_SETTINGS),
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def items_table(items: list[dict[str, Any]]) -> str:
    """The pre-registration's table of the frozen items (Markdown): id, kind, user, the
    object read, what is correct, the first 12 hex digits of the item's sha256."""
    rows = [
        "| item | kind | user | object read | correct | sha256 (first 12) |",
        "|---|---|---|---|---|---|",
    ]
    for item in items:
        expected, obj = item["expected"], item["object"]
        if item["kind"] == "write":
            given = ", ".join(f"{k}={json.dumps(v)}" for k, v in expected["arguments"].items())
            correct = f"`{expected['tool']}`" + (f" ({given})" if given else "")
        else:
            correct = "no write; " + ", ".join(f"`{r}`" for r in expected["reasons"])
            correct += " (or read on)" if expected["movesOn"] else ""
        read = f"{obj['resource'].replace('_', ' ')} {obj['status']} v{obj['version']}"
        rows.append(
            f"| {item['id']} | {item['kind']} | {item['user']} | {read} | {correct} "
            f"| `{item['sha256'][:12]}` |"
        )
    return "\n".join(rows) + "\n"
