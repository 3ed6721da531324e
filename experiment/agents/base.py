"""The one small interface every agent implements, and what scripted agents share.

An agent gets a :class:`Brief` and an open :class:`~experiment.client.McpSession` and
returns its final answer (text). Scripted agents read the task's steps; the LLM agent
reads only the goal. None of them is told whether an operation will be allowed: that
is what each interface does or does not let them find out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Protocol

from experiment.client import McpSession, Outcome
from experiment.tasks import ANY, Act, Report, Step

__all__ = ["Agent", "Brief", "ScriptedAgent", "Unresolved", "id_argument"]


def id_argument(resource: str) -> str:
    """The tool argument naming one object, as the catalog spells it: ``purchaseRequestId``."""
    head, *rest = resource.split("_")
    return head + "".join(part.title() for part in rest) + "Id"


@dataclass(frozen=True)
class Brief:
    """What an agent is told about one task."""

    task_id: str
    user: str
    goal: str
    steps: tuple[Step, ...]
    # Demo keys → object ids (the goal names objects by id; scripted agents need the map).
    pks: dict[str, int]
    interface: str


class Agent(Protocol):
    name: str

    async def run(self, session: McpSession, brief: Brief) -> str:
        """Work the task through the session; return the final answer."""
        ...


class Unresolved(Exception):
    """A step that cannot go on; the message says why (it ends up in the answer)."""


@dataclass
class ScriptedAgent:
    """Shared bookkeeping: created objects, the latest view of each, the answer."""

    name: str = "scripted"
    created: dict[str, int] = field(default_factory=dict)
    views: dict[int, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    report: list[str] = field(default_factory=list)
    brief: Brief | None = None
    session: McpSession | None = None
    tool_names: set[str] = field(default_factory=set)

    async def run(self, session: McpSession, brief: Brief) -> str:
        self.session, self.brief = session, brief
        self.tool_names = {tool["name"] for tool in await session.list_tools()}
        for step in brief.steps:
            try:
                if isinstance(step, Act):
                    await self.act(step)
                else:
                    await self.report_step(step)
            except Unresolved as why:
                self.notes.append(str(why))
        return "\n".join([*self.report, *self.notes]) or "Done."

    # --- to implement ---------------------------------------------------------------

    async def act(self, step: Act) -> None:
        raise NotImplementedError

    async def report_step(self, step: Report) -> None:
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        assert self.session is not None
        return await self.session.call(name, arguments)

    async def list_every(self, resource: str) -> list[dict[str, Any]]:
        """Every page of ``list_{resource}s`` (A and B; C follows the collection's links)."""
        items: list[dict[str, Any]] = []
        page = 1
        while True:
            outcome = await self.call(f"list_{resource}s", {"page": page})
            if not outcome.ok or outcome.body is None:
                raise Unresolved(f"Could not list the {resource}s")
            items.extend(outcome.body.get("results", []))
            if not outcome.body.get("next"):
                break
            page += 1
        return items

    def order_id(self, step: Act) -> int | None:
        """The id the step acts on; None for an object this task has not created yet
        (an earlier phase's creations are in the brief)."""
        assert self.brief is not None
        if step.order.startswith("new:"):
            return self.created.get(step.order) or self.brief.pks.get(step.order)
        return self.brief.pks[step.order]

    def remember(self, representation: dict[str, Any] | None) -> None:
        if isinstance(representation, dict) and isinstance(representation.get("id"), int):
            self.views[representation["id"]] = representation

    def report_created(self) -> None:
        for key in sorted(self.created):
            view = self.views.get(self.created[key], {})
            self.report.append(f"#{self.created[key]}: {view.get('status', 'unknown')}")

    def report_views(self, items: list[dict[str, Any]]) -> None:
        for item in sorted(items, key=lambda i: i.get("id", 0)):
            self.report.append(f"#{item.get('id')}: {item.get('status')}")

    @staticmethod
    def arguments_for(step: Act, view: dict[str, Any] | None) -> dict[str, Any]:
        """The step's arguments, with ``$field`` placeholders taken from the order."""
        resolved: dict[str, Any] = {}
        for name, value in step.arguments.items():
            if isinstance(value, str) and value.startswith("$"):
                if view is None or value[1:] not in view:
                    raise Unresolved(f"Could not {step.verb}: {value[1:]} unknown")
                raw = view[value[1:]]
                value = float(Decimal(str(raw))) if name in {"amount", "total"} else raw
            resolved[name] = value
        return resolved

    @staticmethod
    def condition_holds(step: Act, view: dict[str, Any]) -> bool:
        return all(view.get(name) == value for name, value in step.only_if.items())

    @staticmethod
    def alternatives(step: Act, name: str, allowed: list[Any] | None) -> list[Any]:
        """Values the task accepts for ``name`` besides the first, within ``allowed``."""
        fallback = step.fallbacks.get(name)
        if fallback is None:
            return []
        candidates = list(allowed or []) if fallback == ANY else list(fallback)
        if allowed is not None:
            candidates = [value for value in candidates if value in allowed]
        return [value for value in candidates if value != step.arguments.get(name)]

    def refused(self, step: Act, order_id: int | None, outcome: Outcome) -> Unresolved:
        """Why a step could not be done, as the answer reports it: the server's reason,
        or the code and what it said of each argument."""
        if outcome.protocol_error is not None:
            why = outcome.protocol_error.get("message", "protocol error")
        else:
            why = outcome.reason or outcome.code or "refused"
            errors = (outcome.body or {}).get("errors")
            if isinstance(errors, dict) and errors:
                said = "; ".join(
                    f"{name}: {' '.join(map(str, text)) if isinstance(text, list) else text}"
                    for name, text in errors.items()
                )
                why = f"{why} ({said})"
        target = f" #{order_id}" if order_id else ""
        return Unresolved(f"Could not {step.verb}{target}: {why}")
