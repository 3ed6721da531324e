"""Scripted baseline for interface A (static catalog): act from the task, learn from errors.

It calls the tool named for the step's operation with the task's arguments, reads an
order only when the task needs one of its fields (a condition, ``$total``), and never
sends ``expectedVersion`` — the plain representation offers nothing to decide with
beforehand. On a validation error it tries the other values the task accepts, taken
from the tool's ``inputSchema``; on any other refusal it stops and reports the reason.
It uses only tools from the list it took at the start.
"""

from __future__ import annotations

from typing import Any

from experiment.agents.base import ScriptedAgent, Unresolved, id_argument
from experiment.tasks import Act, Report

__all__ = ["ScriptedStaticAgent"]


class ScriptedStaticAgent(ScriptedAgent):
    def _schema_enum(self, tool: str, argument: str) -> list[Any] | None:
        assert self.session is not None and self.session.tools is not None
        for listed in self.session.tools:
            if listed["name"] == tool:
                prop = listed.get("inputSchema", {}).get("properties", {}).get(argument, {})
                enum = prop.get("enum")
                return list(enum) if isinstance(enum, list) else None
        return None

    async def act(self, step: Act) -> None:
        tool = step.tool
        if tool not in self.tool_names:
            raise Unresolved(f"Could not {step.verb}: no such tool in my list")
        order_id = self.order_id(step)
        if step.verb != "create" and order_id is None:
            raise Unresolved(f"Could not {step.verb}: it was never created")
        view = None
        needs_view = bool(step.only_if) or any(
            isinstance(v, str) and v.startswith("$") for v in step.arguments.values()
        )
        if needs_view and order_id is not None:
            read = await self.call(f"get_{step.resource}", {id_argument(step.resource): order_id})
            if not read.ok:
                raise self.refused(step, order_id, read)
            view = read.body
            self.remember(view)
            assert view is not None
            if not self.condition_holds(step, view):
                self.notes.append(f"Left #{order_id} as it is: it is {view.get('status')}")
                return
        arguments = self.arguments_for(step, view)
        base = {} if order_id is None else {id_argument(step.resource): order_id}
        tried: list[dict[str, Any]] = []
        while True:
            outcome = await self.call(tool, {**base, **arguments})
            tried.append(dict(arguments))
            if outcome.ok:
                self.remember(outcome.body)
                if step.verb == "create" and outcome.body is not None:
                    self.created[step.order] = outcome.body["id"]
                return
            if outcome.code != "validation_error" or outcome.body is None:
                raise self.refused(step, order_id, outcome)
            retry = self._next_try(step, tool, arguments, outcome.body.get("errors") or {}, tried)
            if retry is None:
                raise self.refused(step, order_id, outcome)
            arguments = retry

    def _next_try(
        self,
        step: Act,
        tool: str,
        arguments: dict[str, Any],
        errors: dict[str, Any],
        tried: list[dict[str, Any]],
    ) -> dict[str, Any] | None:
        """Learn from a validation error: another accepted value for a refused argument."""
        for name in errors:
            for value in self.alternatives(step, name, self._schema_enum(tool, name)):
                candidate = {**arguments, name: value}
                if candidate not in tried:
                    return candidate
        return None

    async def report_step(self, step: Report) -> None:
        if step.scope == "created":
            self.report_created()
            return
        items = await self.list_every(step.resource)
        self.report_views(items)
