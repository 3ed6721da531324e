"""An agent driven by a chat model behind any OpenAI-compatible ``/chat/completions``.

The model gets the same system prompt on every interface (plus that server's MCP
``instructions``), the task's goal, and the tools the agent listed at the start, as
functions. Each tool call it makes is run over MCP and its result text goes back as a
``tool`` message, until it answers without a tool call or ``max_steps`` is reached.

ToolSandbox-style perturbations: ``scramble_names`` renames every tool consistently
(``tool_3fa2…``) and maps calls back — names in tool results are renamed too, so the
world stays consistent; ``distractors`` adds N plausible tools that do not exist on the
server: calling one is an invalid transition and the model is told it failed.

Configuration comes from the environment: ``OPENAI_BASE_URL`` (e.g.
``https://api.openai.com/v1``), ``OPENAI_MODEL``, ``OPENAI_API_KEY``; optionally
``OPENAI_TEMPERATURE``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from dataclasses import dataclass, field
from typing import Any

from experiment.agents.base import Brief
from experiment.client import McpSession, tool_definitions

__all__ = ["DISTRACTORS", "SYSTEM_PROMPT", "LlmAgent", "LlmSettings"]

SYSTEM_PROMPT = """\
You are an operations agent for an online shop, working through the tools you are given \
on behalf of the user named below. Do what the task asks and nothing else. When \
something cannot be done, do not look for a way around it: leave it and say why. When \
you are done, reply without calling a tool, with a short final answer; when the task \
asks for a report, give one line per order exactly as `#<id>: <status>`.

The server's instructions follow.
"""

DISTRACTORS: tuple[dict[str, Any], ...] = (
    {
        "name": "archive_order",
        "description": "Archive an order so it no longer shows in lists. Takes orderId.",
        "parameters": {"orderId": {"type": "integer"}},
    },
    {
        "name": "apply_discount",
        "description": "Apply a percentage discount to an order's total. Takes orderId, percent.",
        "parameters": {"orderId": {"type": "integer"}, "percent": {"type": "number"}},
    },
    {
        "name": "escalate_order",
        "description": "Escalate an order to a supervisor for a decision. Takes orderId and note.",
        "parameters": {"orderId": {"type": "integer"}, "note": {"type": "string"}},
    },
    {
        "name": "force_status",
        "description": "Set an order's status directly, skipping the usual checks.",
        "parameters": {"orderId": {"type": "integer"}, "status": {"type": "string"}},
    },
    {
        "name": "reopen_order",
        "description": "Reopen a cancelled order so it is pending again. Takes orderId.",
        "parameters": {"orderId": {"type": "integer"}},
    },
    {
        "name": "send_invoice",
        "description": "Email the invoice of an order to its customer. Takes orderId.",
        "parameters": {"orderId": {"type": "integer"}},
    },
    {
        "name": "update_address",
        "description": "Change the delivery address of an order. Takes orderId and address.",
        "parameters": {"orderId": {"type": "integer"}, "address": {"type": "string"}},
    },
    {
        "name": "merge_orders",
        "description": "Merge two orders of the same customer into one. Takes orderId and otherId.",
        "parameters": {"orderId": {"type": "integer"}, "otherId": {"type": "integer"}},
    },
)

DISTRACTOR_ANSWER = json.dumps(
    {"error": "This tool is not available on this server; nothing was done."}
)


@dataclass(frozen=True)
class LlmSettings:
    base_url: str
    model: str
    api_key: str
    temperature: float | None = None
    max_steps: int = 20
    scramble_names: bool = False
    distractors: int = 0
    seed: int = 0
    timeout: float = 120.0

    @classmethod
    def from_env(cls, **options: Any) -> LlmSettings:
        missing = [name for name in ("OPENAI_BASE_URL", "OPENAI_MODEL") if not os.environ.get(name)]
        if missing:
            raise RuntimeError(f"--agent llm needs {', '.join(missing)} in the environment.")
        temperature = os.environ.get("OPENAI_TEMPERATURE")
        return cls(
            base_url=os.environ["OPENAI_BASE_URL"].rstrip("/"),
            model=os.environ["OPENAI_MODEL"],
            api_key=os.environ.get("OPENAI_API_KEY", ""),
            temperature=float(temperature) if temperature else None,
            **options,
        )


@dataclass
class Renaming:
    """Consistent tool names for the model: real → shown, and back."""

    shown: dict[str, str] = field(default_factory=dict)

    @property
    def real(self) -> dict[str, str]:
        return {shown: real for real, shown in self.shown.items()}

    def outward(self, text: str) -> str:
        if not self.shown:
            return text
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, self.shown)) + r")\b")
        return pattern.sub(lambda m: self.shown[m.group(1)], text)


class LlmAgent:
    name = "llm"

    def __init__(self, settings: LlmSettings, *, repeat: int = 0) -> None:
        self.settings = settings
        self.random = random.Random(f"{settings.seed}:{repeat}")

    def _tools(self, listed: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Renaming, set]:
        definitions = tool_definitions(listed)
        distractors = set()
        for fake in self.random.sample(
            DISTRACTORS, min(self.settings.distractors, len(DISTRACTORS))
        ):
            distractors.add(fake["name"])
            definitions.append(
                {
                    "type": "function",
                    "function": {
                        "name": fake["name"],
                        "description": fake["description"],
                        "parameters": {
                            "type": "object",
                            "properties": fake["parameters"],
                            "required": ["orderId"],
                        },
                    },
                }
            )
        renaming = Renaming()
        if self.settings.scramble_names:
            for definition in definitions:
                real = definition["function"]["name"]
                renaming.shown[real] = f"tool_{self.random.getrandbits(32):08x}"
                definition["function"]["name"] = renaming.shown[real]
            self.random.shuffle(definitions)
        return definitions, renaming, distractors

    async def run(self, session: McpSession, brief: Brief) -> str:
        import httpx2

        listed = await session.list_tools()
        tools, renaming, distractors = self._tools(listed)
        session.trace.schemas_text = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": SYSTEM_PROMPT + "\n" + renaming.outward(session.instructions),
            },
            {"role": "user", "content": f"You are logged in as {brief.user}. Task: {brief.goal}"},
        ]
        headers = (
            {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        )
        async with httpx2.AsyncClient(headers=headers, timeout=self.settings.timeout) as http:
            for _ in range(self.settings.max_steps):
                message = await self._complete(http, session, messages, tools)
                messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    return str(message.get("content") or "")
                for call in calls:
                    content = await self._run_call(session, call, renaming, distractors)
                    messages.append(
                        {"role": "tool", "tool_call_id": call.get("id"), "content": content}
                    )
        return "Stopped: step limit reached."

    async def _complete(
        self,
        http: Any,
        session: McpSession,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "tools": tools,
        }
        if self.settings.temperature is not None:
            payload["temperature"] = self.settings.temperature
        url = f"{self.settings.base_url}/chat/completions"
        for attempt in range(4):
            response = await http.post(url, json=payload)
            if response.status_code in {429, 500, 502, 503, 504} and attempt < 3:
                await asyncio.sleep(2**attempt)
                continue
            response.raise_for_status()
            break
        data = response.json()
        session.trace.llm_requests += 1
        for key, value in (data.get("usage") or {}).items():
            if isinstance(value, int):
                session.trace.llm_usage[key] = session.trace.llm_usage.get(key, 0) + value
        message = dict(data["choices"][0]["message"])
        # Only what the API takes back in the next request.
        kept = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        return kept

    async def _run_call(
        self, session: McpSession, call: dict[str, Any], renaming: Renaming, distractors: set
    ) -> str:
        function = call.get("function") or {}
        shown = str(function.get("name", ""))
        name = renaming.real.get(shown, shown)
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            session.trace.local_refusals.append((name, "malformed arguments"))
            return json.dumps({"error": "The arguments were not a JSON object; nothing was done."})
        if name in distractors:
            session.trace.local_refusals.append((name, "distractor"))
            return DISTRACTOR_ANSWER
        outcome = await session.call(name, arguments)
        return renaming.outward(outcome.text)
