"""Scripted baseline for interface C (HAL-FORMS): follow links, fill templates.

It starts at the entry point named in ``read_resource``'s description, follows
``_links`` to a collection (``orders``…) and its items, and acts only through a template the
order's document offers: each property filled from the task (offered ``options`` only,
within ``max`` and ``regex``), hidden ones copied. A refusal because the document is
out of date (``stale_version``, or a template no longer offered) makes it read the
order again and decide anew. It never builds a URL itself. A document does not say why
a template is missing; where the goal asks why (``Act.explain``) it submits the missing
template once to hear the server's reason — a refused write, as A's attempts are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from experiment.agents.base import ScriptedAgent, Unresolved
from experiment.tasks import Act, Report

__all__ = ["ScriptedFormsAgent"]

MAX_ATTEMPTS = 3
_ENTRY = re.compile(r"entry point is (\S+?)\.?$")


def _option_values(options: dict[str, Any]) -> list[Any]:
    inline = options.get("inline") or []
    return [item.get("value") if isinstance(item, dict) else item for item in inline]


@dataclass
class ScriptedFormsAgent(ScriptedAgent):
    entry: dict[str, Any] | None = None
    urls: dict[int, str] = field(default_factory=dict)

    # --- navigation -----------------------------------------------------------------

    async def _read(self, url: str) -> dict[str, Any]:
        outcome = await self.call("read_resource", {"url": url})
        if not outcome.ok or outcome.body is None:
            raise Unresolved(f"Could not read {url}: {outcome.code}")
        self._learn(outcome.body)
        return outcome.body

    def _learn(self, document: dict[str, Any]) -> None:
        """Remember the documents seen (an item, or a collection's embedded items)."""
        embedded = [
            item
            for items in document.get("_embedded", {}).values()
            if isinstance(items, list)
            for item in items
            if isinstance(item, dict)
        ]
        for item in [document, *embedded]:
            href = item.get("_links", {}).get("self", {}).get("href")
            if isinstance(item.get("id"), int) and href:
                self.urls[item["id"]] = href
                self.remember(item)

    async def _entry(self) -> dict[str, Any]:
        if self.entry is None:
            assert self.session is not None and self.session.tools is not None
            tool = next(t for t in self.session.tools if t["name"] == "read_resource")
            match = _ENTRY.search(tool.get("description", ""))
            if match is None:
                raise Unresolved("No entry point")
            self.entry = await self._read(match.group(1))
        return self.entry

    async def _collection(self, resource: str) -> tuple[str, dict[str, Any]]:
        entry = await self._entry()
        href = entry.get("_links", {}).get(f"{resource}s", {}).get("href")
        if not href:
            raise Unresolved(f"The entry point has no {resource}s link")
        return href, await self._read(href)

    async def _find(self, resource: str, order_id: int) -> str:
        """The object's URL, following the collection's pages until it shows up."""
        if order_id in self.urls:
            return self.urls[order_id]
        _, page = await self._collection(resource)
        while order_id not in self.urls:
            following = page.get("_links", {}).get("next", {}).get("href")
            if not following:
                raise Unresolved(f"#{order_id} is not in the {resource}s collection")
            page = await self._read(following)
        return self.urls[order_id]

    # --- acting ---------------------------------------------------------------------

    def _fill(self, step: Act, template: dict[str, Any], wanted: dict[str, Any]) -> dict:
        arguments: dict[str, Any] = {}
        for prop in template.get("properties", []):
            name = prop["name"]
            if prop.get("type") == "hidden" or prop.get("readOnly"):
                if "value" in prop:
                    arguments[name] = prop["value"]
                continue
            if name not in wanted:
                if prop.get("required"):
                    raise Unresolved(f"Could not {step.verb}: the form needs {name}")
                continue
            value = wanted[name]
            if "options" in prop:
                allowed = _option_values(prop["options"])
                if value not in allowed:
                    options = self.alternatives(step, name, allowed)
                    if not options:
                        raise Unresolved(
                            f"Could not {step.verb}: {name} must be one of {', '.join(allowed)}"
                        )
                    value = options[0]
            if prop.get("max") is not None and float(value) > float(prop["max"]):
                raise Unresolved(f"Could not {step.verb}: {name} is at most {prop['max']}")
            if prop.get("regex") and not re.fullmatch(prop["regex"], str(value)):
                raise Unresolved(f"Could not {step.verb}: {name} does not match the form")
            arguments[name] = value
        return arguments

    async def act(self, step: Act) -> None:
        if step.verb == "create":
            await self._create(step)
            return
        order_id = self.order_id(step)
        if order_id is None:
            raise Unresolved(f"Could not {step.verb}: it was never created")
        url = await self._find(step.resource, order_id)
        document = self.views.get(order_id) or await self._read(url)
        name = step.tool
        for _ in range(MAX_ATTEMPTS):
            if not self.condition_holds(step, document):
                self.notes.append(f"Left #{order_id} as it is: it is {document.get('status')}")
                return
            template = document.get("_templates", {}).get(name)
            if template is None and step.explain:
                # The document does not say why; the goal asks: submit to hear the reason.
                outcome = await self.call(
                    "submit_form",
                    {"url": url, "template": name, "arguments": self.arguments_for(step, document)},
                )
                if not outcome.ok:
                    raise self.refused(step, order_id, outcome)
                self._learn(outcome.body or {})  # it applied after all (it changed meanwhile)
                return
            if template is None:
                raise Unresolved(
                    f"Could not {step.verb} #{order_id}: not offered "
                    f"(it is {document.get('status')})"
                )
            arguments = self._fill(step, template, self.arguments_for(step, document))
            outcome = await self.call(
                "submit_form", {"url": url, "template": name, "arguments": arguments}
            )
            if outcome.ok and outcome.body is not None:
                self._learn(outcome.body)
                return
            if outcome.code not in {"stale_version", "operation_not_available"}:
                raise self.refused(step, order_id, outcome)
            document = await self._read(url)  # out of date: look again and decide anew
        raise Unresolved(f"Could not {step.verb} #{order_id}: it keeps changing")

    async def _create(self, step: Act) -> None:
        href, collection = await self._collection(step.resource)
        template = collection.get("_templates", {}).get(step.tool)
        if template is None:
            raise Unresolved(f"Could not create: the collection offers no {step.tool} form")
        arguments = self._fill(step, template, self.arguments_for(step, None))
        outcome = await self.call(
            "submit_form", {"url": href, "template": step.tool, "arguments": arguments}
        )
        if not outcome.ok or outcome.body is None:
            raise self.refused(step, None, outcome)
        self._learn(outcome.body)
        self.created[step.order] = outcome.body["id"]

    async def report_step(self, step: Report) -> None:
        if step.scope == "created":
            self.report_created()
            return
        plural = f"{step.resource}s"
        _, page = await self._collection(step.resource)
        items = list(page.get("_embedded", {}).get(plural, []))
        while following := page.get("_links", {}).get("next", {}).get("href"):
            page = await self._read(following)
            items.extend(page.get("_embedded", {}).get(plural, []))
        self.report_views(items)
