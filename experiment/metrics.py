"""Metrics of one run, computed from its recorded traffic (:class:`~experiment.client.Trace`).

- ``calls``: ``tools/call`` requests the agent sent; ``reads``: those of a read-only
  tool (``readOnlyHint`` in a tool list the server sent).
- ``invalidTransitions``: attempts to change something that the server refused —
  a write tool answered with ``isError`` (``operation_not_available``,
  ``validation_error``, ``not_found``…), a ``tools/call`` answered with a JSON-RPC error
  (unknown or forbidden tool), and every call of a distractor tool. A refusal caused
  by someone else's change is not the agent's mistake and is counted as a stale
  conflict instead (below).
- ``staleConflicts``: refusals because the agent's view was out of date:
  ``stale_version``, or (interface C) ``operation_not_available`` for a template that
  the latest document the agent got of that resource (read, embedded in a collection,
  or returned by a submission) offered. ``staleRecovered``: those followed by
  a successful read, in a run that succeeded.
- ``contextBytes``: what the agent placed in its context — ``schemas`` (its tool list as
  function definitions), ``instructions`` (the server's), ``responses`` (the text of
  every tool result). ``contextTokens``: the same in tokens (see
  :mod:`experiment.tokens` for the method). ``wireBytes``: all HTTP bodies both ways.
- ``leaks``: for each response body, how many traces — the name, URN, title or REST
  path of an operation outside the caller's catalog — it contains.
- ``latencyMs``: the sum of the HTTP round trips; ``wallMs``: the whole run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from experiment.client import Exchange, Trace, context_text
from experiment.tokens import Tokenizer

__all__ = ["RunMetrics", "forbidden_traces", "measure"]

# A template offered by the agent's last read of a resource, refused now: it changed.
_NOT_AVAILABLE = "operation_not_available"


@dataclass
class RunMetrics:
    invalid_transitions: int = 0
    calls: int = 0
    reads: int = 0
    listings: int = 0
    stale_conflicts: int = 0
    stale_recovered: int = 0
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


def _learn_templates(seen: dict[str, set[str]], url: str, document: Any) -> None:
    """The templates each resource offered in ``document``: itself and embedded items."""
    if not isinstance(document, dict):
        return
    items = [(url, document)]
    for embedded in (document.get("_embedded") or {}).values():
        for item in embedded if isinstance(embedded, list) else []:
            href = (
                (item.get("_links") or {}).get("self", {}).get("href")
                if isinstance(item, dict)
                else None
            )
            if href:
                items.append((href, item))
    for href, item in items:
        templates = item.get("_templates")
        seen[href] = set(templates) if isinstance(templates, dict) else set()


def measure(
    trace: Trace, *, forbidden: list[str], success: bool, tokenizer: Tokenizer
) -> RunMetrics:
    metrics = RunMetrics()
    read_only = _read_only_tools(trace.exchanges)
    responses: list[str] = []
    # Interface C: the templates the latest read of each URL offered.
    seen_templates: dict[str, set[str]] = {}
    stale_at: list[int] = []
    successful_reads_at: list[int] = []
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
            metrics.invalid_transitions += 1
            metrics.refusals.append(f"{name}: JSON-RPC {exchange.error.get('code')}")
            continue
        result = exchange.result or {}
        body = result.get("structuredContent")
        if not result.get("isError"):
            if is_read:
                successful_reads_at.append(index)
            if name in {"read_resource", "submit_form"} and isinstance(body, dict):
                href = (body.get("_links") or {}).get("self", {}).get("href")
                _learn_templates(seen_templates, str(href or arguments.get("url")), body)
            continue
        code = body.get("code") if isinstance(body, dict) else None
        reason = body.get("reason") if isinstance(body, dict) else None
        if is_read:
            continue  # a failed read changes nothing
        stale = code == "stale_version" or (
            name == "submit_form"
            and code == _NOT_AVAILABLE
            and str(arguments.get("template"))
            in seen_templates.get(str(arguments.get("url")), set())
        )
        if stale:
            metrics.stale_conflicts += 1
            stale_at.append(index)
        else:
            metrics.invalid_transitions += 1
        metrics.refusals.append(f"{name}: {code}" + (f" ({reason})" if reason else ""))
    for name, why in trace.local_refusals:
        metrics.invalid_transitions += 1
        metrics.refusals.append(f"{name}: {why}")
    if success:
        metrics.stale_recovered = sum(
            1 for at in stale_at if any(read > at for read in successful_reads_at)
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
