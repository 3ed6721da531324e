"""Metrics of one run, computed from its recorded traffic (:class:`~experiment.client.Trace`).

- ``calls``: ``tools/call`` requests the agent sent; ``reads``: those of a read-only
  tool (``readOnlyHint`` in a tool list the server sent).
- ``refusedWrites``: every refused attempt to change something, by cause:

  - ``conflict`` — another user really changed the object (a :class:`Change` the runner
    made) after the agent last read it, and the attempt was right before that change:
    ``stale_version`` for the very version the object had before it, or
    ``operation_not_available`` for an operation that applied to it before it;
  - ``madeUpVersion`` — any other ``stale_version``: a version the agent made up, or
    kept after reading a newer one (in a task where nothing else changed the object,
    every ``stale_version`` is this);
  - ``addressing`` — a call that names nothing there is: ``not_found``, an unknown or
    hidden tool (a JSON-RPC error, or refused by the host), a distractor, arguments
    that are not a JSON object, a URL outside the API (C);
  - ``policy`` — the server's rules refused it: ``operation_not_available`` (state or
    policy, with its ``reason``), ``validation_error`` (values the rules exclude), and
    anything else.

  ``invalidTransitions`` = policy + madeUpVersion + addressing (the agent's mistakes);
  ``staleConflicts`` = conflict. ``staleRecovered``: conflicts followed by a successful
  read, in a run that succeeded.
- ``contextBytes``: what the agent placed in its context — ``schemas`` (its tool list as
  function definitions), ``instructions`` (the server's), ``responses`` (the text of
  every tool result). ``contextTokens``: the same in tokens (see
  :mod:`experiment.tokens` for the method). ``wireBytes``: all HTTP bodies both ways.
- ``leaks``: for each response body, how many traces — the name, URN, title or REST
  path of an operation outside the caller's catalog — it contains.
- ``latencyMs``: the sum of the HTTP round trips; ``wallMs``: the whole run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from experiment.client import Exchange, Trace, context_text
from experiment.tokens import Tokenizer

__all__ = ["CAUSES", "Change", "RunMetrics", "forbidden_traces", "measure"]

CAUSES = ("policy", "madeUpVersion", "addressing", "conflict")
_ADDRESSING_CODES = {"not_found", "malformed_request"}
# submit_form's own arguments: a refusal about them names nothing there is.
_FORM_ADDRESS = {"url", "template", "arguments"}


@dataclass(frozen=True)
class Change:
    """Another user's change to one object during a run (a task's injection)."""

    resource: str  # the catalog's resource name: order, purchase_request
    pk: int
    path: str  # the object's URL path, /api/orders/13/
    version_before: int
    # The operations the run's user could run on it just before the change.
    available_before: frozenset[str]
    # How many exchanges the session had recorded when it happened.
    at: int


@dataclass
class RunMetrics:
    invalid_transitions: int = 0
    calls: int = 0
    reads: int = 0
    listings: int = 0
    stale_conflicts: int = 0
    stale_recovered: int = 0
    refused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CAUSES, 0))
    leaks: int = 0
    leak_samples: list[str] = field(default_factory=list)
    context_bytes: dict[str, int] = field(default_factory=dict)
    context_tokens: dict[str, Any] = field(default_factory=dict)
    wire_bytes: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    refusals: list[str] = field(default_factory=list)


def combined(parts: list[RunMetrics]) -> RunMetrics:
    """The metrics of a run made of several sessions (a task's phases): counts, sizes
    and latencies added, lists joined, the first tokenizer name kept."""

    def add(first: Any, second: Any) -> Any:
        if isinstance(first, dict):
            merged = dict(first)
            for key, value in second.items():
                merged[key] = add(first[key], value) if key in first else value
            return merged
        if isinstance(first, str):
            return first
        return first + second  # numbers and lists

    total = RunMetrics()
    for part in parts:
        for name in total.__dataclass_fields__:
            setattr(total, name, add(getattr(total, name), getattr(part, name)))
    total.leak_samples = list(dict.fromkeys(total.leak_samples))
    return total


def forbidden_traces(hidden_operations: Iterable[Any], allowed: Iterable[Any] = ()) -> list[str]:
    """What must never reach a caller of the operations they lack: name, URN, title, and
    a transition's path segment. A trace that an operation the caller may use shares
    (two resources' ``/cancel/``, one title) proves nothing and is left out."""

    def traces_of(operation: Any) -> list[str]:
        traces = [operation.name, operation.urn, operation.urn.split(":")[3], operation.title]
        if operation.is_transition and operation.method_name:
            traces.append(f"/{operation.method_name}/")
        return traces

    shared = {trace for operation in allowed for trace in traces_of(operation)}
    return sorted({t for op in hidden_operations for t in traces_of(op)} - shared)


def _read_only_tools(exchanges: list[Exchange]) -> set[str]:
    names: set[str] = set()
    for exchange in exchanges:
        if exchange.method == "tools/list" and exchange.result is not None:
            for tool in exchange.result.get("tools", []):
                if (tool.get("annotations") or {}).get("readOnlyHint"):
                    names.add(tool["name"])
    return names


def _path(url: Any) -> str:
    """A URL's path as the API spells it: slashes collapsed, the trailing one added."""
    path = re.sub(r"//+", "/", urlsplit(str(url)).path or "/")
    return path if path.endswith("/") else path + "/"


def _target(name: str, arguments: dict[str, Any]) -> tuple[str | None, Any]:
    """(resource path or tool name, id) a write names: C's ``url``, or a catalog tool's
    ``…Id`` argument."""
    if name == "submit_form":
        return _path(arguments.get("url")), None
    ids = [value for key, value in arguments.items() if str(key).endswith("Id")]
    return name, ids[0] if ids else None


def _names(change: Change, name: str, arguments: dict[str, Any]) -> bool:
    where, pk = _target(name, arguments)
    if name == "submit_form":
        return where == change.path
    return name.endswith(f"_{change.resource}") and str(pk) == str(change.pk)


def _sent_version(name: str, arguments: dict[str, Any]) -> int | None:
    values = arguments.get("arguments") if name == "submit_form" else arguments
    version = values.get("expectedVersion") if isinstance(values, dict) else None
    try:
        return int(version) if version is not None and not isinstance(version, bool) else None
    except (TypeError, ValueError):
        return None


def _operation(name: str, arguments: dict[str, Any]) -> str:
    return str(arguments.get("template")) if name == "submit_form" else name


def _cause(
    index: int,
    name: str,
    arguments: dict[str, Any],
    body: dict[str, Any],
    changes: Sequence[Change],
    seen_after: Any,
) -> str:
    """Why a write was refused (see the module's docstring)."""
    code = body.get("code")
    if code in _ADDRESSING_CODES:
        return "addressing"
    if code == "validation_error" and name == "submit_form":
        errors = body.get("errors")
        if isinstance(errors, dict) and errors and set(errors) <= _FORM_ADDRESS:
            return "addressing"
    # The changes to this object, made before this call and unseen by the agent since.
    relevant = [
        change
        for change in changes
        if change.at <= index
        and _names(change, name, arguments)
        and not seen_after(change.path, change.at, index)
    ]
    if code == "stale_version":
        sent = _sent_version(name, arguments)
        real = any(sent == change.version_before for change in relevant)
        return "conflict" if real else "madeUpVersion"
    if code == "operation_not_available":
        operation = _operation(name, arguments)
        if any(operation in change.available_before for change in relevant):
            return "conflict"
    return "policy"


def measure(
    trace: Trace,
    *,
    forbidden: list[str],
    success: bool,
    tokenizer: Tokenizer,
    changes: Sequence[Change] = (),
) -> RunMetrics:
    metrics = RunMetrics()
    read_only = _read_only_tools(trace.exchanges)
    responses: list[str] = []
    # Successful reads: (index, the text they returned), to tell what the agent saw.
    successful_reads: list[tuple[int, str]] = []
    conflicts_at: list[int] = []

    def seen_after(path: str, start: int, end: int) -> bool:
        return any(start <= at < end and path in text for at, text in successful_reads)

    def count(cause: str) -> None:
        metrics.refused[cause] += 1

    for index, exchange in enumerate(trace.exchanges):
        if exchange.method == "tools/list":
            metrics.listings += 1
        if exchange.method != "tools/call":
            continue
        metrics.calls += 1
        name = str(exchange.params.get("name", ""))
        arguments = exchange.params.get("arguments") or {}
        is_read = name in read_only
        metrics.reads += is_read
        responses.append(context_text(exchange.result, exchange.error))
        if exchange.error is not None:
            count("addressing")
            metrics.refusals.append(f"{name}: JSON-RPC {exchange.error.get('code')}")
            continue
        result = exchange.result or {}
        body = result.get("structuredContent")
        if not result.get("isError"):
            if is_read:
                successful_reads.append((index, responses[-1]))
            continue
        if is_read:
            continue  # a failed read changes nothing
        problem = body if isinstance(body, dict) else {}
        cause = _cause(index, name, arguments, problem, changes, seen_after)
        count(cause)
        if cause == "conflict":
            conflicts_at.append(index)
        code, reason = problem.get("code"), problem.get("reason")
        metrics.refusals.append(f"{name}: {code}" + (f" ({reason})" if reason else ""))
    for name, why in trace.local_refusals:
        count("addressing")
        metrics.refusals.append(f"{name}: {why}")
    metrics.stale_conflicts = metrics.refused["conflict"]
    metrics.invalid_transitions = sum(
        number for cause, number in metrics.refused.items() if cause != "conflict"
    )
    if success:
        metrics.stale_recovered = sum(
            1 for at in conflicts_at if any(read > at for read, _ in successful_reads)
        )
    response_text = "".join(responses)
    metrics.context_bytes = {
        "schemas": len(trace.schemas_text.encode()),
        "instructions": len(trace.instructions.encode()),
        "responses": len(response_text.encode()),
    }
    metrics.context_tokens = {
        "schemas": tokenizer.count(trace.schemas_text),
        "instructions": tokenizer.count(trace.instructions),
        "responses": sum(tokenizer.count(text) for text in responses),
        "method": tokenizer.method,
    }
    metrics.wire_bytes = {
        "sent": sum(e.request_bytes for e in trace.exchanges),
        "received": sum(e.response_bytes for e in trace.exchanges),
    }
    metrics.latency_ms = round(sum(e.latency_ms for e in trace.exchanges), 1)

    for exchange in trace.exchanges:
        text = exchange.body.decode("utf-8", errors="replace")
        for needle in forbidden:
            if needle in text:
                metrics.leaks += 1
                if needle not in metrics.leak_samples:
                    metrics.leak_samples.append(needle)
    return metrics
