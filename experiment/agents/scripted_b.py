"""Scripted baseline for interface B (hybrid): act only on affordances.

Before acting on an order it needs a view of it (its latest answer, or a read). It calls
an operation only if the view lists it in ``affordances``, with the affordance's bound
arguments, values inside its ``constraints`` (another value the task accepts when the
first is excluded) and ``expectedVersion`` = ``validForVersion``. An operation missing
from its view is left alone, with the ``unavailableAffordances`` reason as the answer.
On ``stale_version`` it reads the order again and decides anew. An affordance may name
a tool the agent's frozen list lacks (task N1): it is called by that name.
"""

from __future__ import annotations

from typing import Any

from experiment.agents.base import ScriptedAgent, Unresolved, id_argument
from experiment.tasks import Act, Report

__all__ = ["ScriptedHybridAgent"]

MAX_ATTEMPTS = 3


class ScriptedHybridAgent(ScriptedAgent):
    async def _read(self, resource: str, order_id: int) -> dict[str, Any]:
        outcome = await self.call(f"get_{resource}", {id_argument(resource): order_id})
        if not outcome.ok or outcome.body is None:
            raise Unresolved(f"Could not read #{order_id}: {outcome.code}")
        self.remember(outcome.body)
        return outcome.body

    async def act(self, step: Act) -> None:
        if step.verb == "create":
            await self._create(step)
            return
        order_id = self.order_id(step)
        if order_id is None:
            raise Unresolved(f"Could not {step.verb}: it was never created")
        name = step.tool
        view = self.views.get(order_id) or await self._read(step.resource, order_id)
        for _ in range(MAX_ATTEMPTS):
            if not self.condition_holds(step, view):
                self.notes.append(f"Left #{order_id} as it is: it is {view.get('status')}")
                return
            affordance = next((a for a in view.get("affordances", []) if a["name"] == name), None)
            if affordance is None:
                why = next(
                    (
                        u["reason"]
                        for u in view.get("unavailableAffordances", [])
                        if u["name"] == name
                    ),
                    "not offered to me",
                )
                raise Unresolved(f"Could not {step.verb} #{order_id}: {why}")
            arguments = self._within(step, self.arguments_for(step, view), affordance)
            outcome = await self.call(
                name,
                {
                    **arguments,
                    **affordance["arguments"],
                    "expectedVersion": affordance["validForVersion"],
                },
            )
            if outcome.ok:
                self.remember(outcome.body)
                return
            if outcome.code != "stale_version":
                raise self.refused(step, order_id, outcome)
            view = await self._read(step.resource, order_id)  # it changed: look again
        raise Unresolved(f"Could not {step.verb} #{order_id}: it keeps changing")

    def _within(self, step: Act, arguments: dict[str, Any], affordance: dict[str, Any]) -> dict:
        """The arguments inside the affordance's constraints, or Unresolved."""
        properties = (affordance.get("constraints") or {}).get("properties", {})
        for name, rule in properties.items():
            if name not in arguments:
                continue
            value = arguments[name]
            allowed = rule.get("enum")
            if allowed is not None and value not in allowed:
                options = self.alternatives(step, name, list(allowed))
                if not options:
                    raise Unresolved(
                        f"Could not {step.verb}: {name} must be one of {', '.join(allowed)}"
                    )
                arguments[name] = value = options[0]
            maximum = rule.get("maximum")
            if maximum is not None and float(value) > float(maximum):
                raise Unresolved(f"Could not {step.verb}: {name} is at most {maximum}")
        return arguments

    async def _create(self, step: Act) -> None:
        if step.tool not in self.tool_names:
            raise Unresolved("Could not create: no such tool in my list")
        outcome = await self.call(step.tool, self.arguments_for(step, None))
        if not outcome.ok or outcome.body is None:
            raise self.refused(step, None, outcome)
        self.remember(outcome.body)
        self.created[step.order] = outcome.body["id"]

    async def report_step(self, step: Report) -> None:
        if step.scope == "created":
            self.report_created()
            return
        items = await self.list_every(step.resource)
        for item in items:
            self.remember(item)
        self.report_views(items)
