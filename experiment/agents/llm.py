"""An agent driven by a chat model behind any OpenAI-compatible ``/chat/completions``.

The model gets the same system prompt on every interface (plus that server's MCP
``instructions``), the task's goal, and the tools the agent listed at the start, as
functions. Each tool call it makes is run over MCP and its result text goes back as a
``tool`` message, until it answers without a tool call or ``max_steps`` is reached.

ToolSandbox-style perturbations: ``scramble_names`` renames every tool consistently
(``tool_3fa2…``) and maps calls back — names in tool results are renamed too, so the
world stays consistent; ``distractors`` adds N plausible tools that do not exist on the
server: calling one is an invalid transition and the model is told it failed.

Small local models often answer a tool request with the call as JSON in ``content``
(a fenced ```json block, ``<tool_call>`` tags, or bare) instead of ``tool_calls``: a JSON
object with ``name`` naming a listed tool and ``arguments`` counts as that call
(:func:`repaired_calls`), and every such repair is counted per run, on every interface
alike.

Per request the agent records what the server counted (:func:`usage_of`): prompt
tokens, those served from the prompt cache, completion tokens, and the model's time.

Configuration comes from the environment: ``OPENAI_BASE_URL`` (e.g.
``https://api.openai.com/v1``), ``OPENAI_MODEL``, ``OPENAI_API_KEY``; optionally
``OPENAI_TEMPERATURE``. ``run_experiment --local-model`` sets them for its own server.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

from experiment.agents.base import Brief
from experiment.client import McpSession, tool_definitions

__all__ = [
    "DISTRACTORS",
    "SYSTEM_PROMPT",
    "LlmAgent",
    "LlmSettings",
    "repaired_calls",
    "usage_of",
]

# No answer format here: the tasks that ask for a report say how (a format stated for
# every task made the 1.5B model answer everything in it instead of calling tools).
SYSTEM_PROMPT = """\
You are an agent working through the tools you are given, on behalf of the user named \
below. Do what the task asks and nothing else: call the tools to do it, with the \
arguments their schemas describe, and use what each call returns. When something \
cannot be done, do not look for a way around it: leave it and say why. When you are \
done, reply without calling a tool, with a short final answer.

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
    # Every completion is bounded: small models asked for a tool call may otherwise
    # generate until the context is full.
    max_tokens: int = 768
    scramble_names: bool = False
    distractors: int = 0
    seed: int = 0
    timeout: float = 600.0
    # The server's own tokenizer (llama-server ``POST /tokenize``), for the tokens of
    # the tool definitions; None where the endpoint has none.
    tokenize_url: str | None = None

    @classmethod
    def from_env(cls, **options: Any) -> LlmSettings:
        missing = [name for name in ("OPENAI_BASE_URL", "OPENAI_MODEL") if not os.environ.get(name)]
        if missing:
            raise RuntimeError(f"--agent llm needs {', '.join(missing)} in the environment.")
        temperature = os.environ.get("OPENAI_TEMPERATURE")
        options.setdefault("tokenize_url", os.environ.get("OPENAI_TOKENIZE_URL") or None)
        return cls(
            base_url=os.environ["OPENAI_BASE_URL"].rstrip("/"),
            model=os.environ["OPENAI_MODEL"],
            api_key=os.environ.get("OPENAI_API_KEY", ""),
            temperature=float(temperature) if temperature else None,
            **options,
        )


def usage_of(data: dict[str, Any]) -> dict[str, int]:
    """Prompt, cached-prompt and completion tokens of one completion, as the server counted.

    OpenAI's ``usage`` (``prompt_tokens`` includes the cached ones, given in
    ``prompt_tokens_details.cached_tokens``); llama-server adds ``timings`` (``prompt_n``
    tokens evaluated, ``cache_n`` taken from the cache), used where ``usage`` is silent.
    """

    def mapping(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    usage, timings = mapping(data.get("usage")), mapping(data.get("timings"))
    details = mapping(usage.get("prompt_tokens_details"))

    def number(*values: Any) -> int | None:
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    cached = number(details.get("cached_tokens"), timings.get("cache_n"))
    prompt = number(usage.get("prompt_tokens"))
    if prompt is None and number(timings.get("prompt_n")) is not None:
        prompt = timings["prompt_n"] + (cached or 0)
    completion = number(usage.get("completion_tokens"), timings.get("predicted_n"))
    counted = {"prompt": prompt, "cached": cached, "completion": completion}
    return {key: value for key, value in counted.items() if value is not None}


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)


def _json_objects(text: str) -> list[Any]:
    """Every JSON value that starts at a ``{`` of ``text`` and parses, outermost first."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found.append(value)
        position = end
    return found


def repaired_calls(content: str | None, names: set[str]) -> list[dict[str, Any]]:
    """Tool calls written into ``content``: JSON objects with ``name`` (a listed tool)
    and ``arguments`` (an object, or a JSON string of one), fenced, tagged or bare.

    Returns them in the ``tool_calls`` shape of the chat API; nothing else counts, so a
    model quoting a tool's name in prose is not taken to have called it.
    """
    if not content or "{" not in content:
        return []
    pieces = _FENCE.findall(content) + _TAGGED.findall(content)
    candidates = [value for piece in pieces for value in _json_objects(piece)]
    if not candidates:
        candidates = _json_objects(content)
    calls: list[dict[str, Any]] = []
    for value in candidates:
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict) or item.get("name") not in names:
                continue
            arguments = item.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    continue
            if not isinstance(arguments, dict):
                continue
            calls.append(
                {
                    "id": f"repaired-{len(calls)}",
                    "type": "function",
                    "function": {
                        "name": item["name"],
                        "arguments": json.dumps(arguments, ensure_ascii=False),
                    },
                }
            )
    return calls


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
        names = {definition["function"]["name"] for definition in tools}
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
            schema_tokens = await self._count_tokens(http, tools)
            for step in range(self.settings.max_steps):
                message = await self._complete(http, session, messages, tools, step)
                if schema_tokens is not None:
                    session.trace.llm_schema_tokens += schema_tokens
                calls = message.get("tool_calls") or []
                if not calls:
                    calls = repaired_calls(message.get("content"), names)
                    if calls:
                        session.trace.llm_repairs += len(calls)
                        # The calls as the chat template writes them, not the text twice.
                        message = {"role": "assistant", "content": None, "tool_calls": calls}
                messages.append(message)
                if not calls:
                    return str(message.get("content") or "")
                for call in calls:
                    content = await self._run_call(session, call, renaming, distractors)
                    messages.append(
                        {"role": "tool", "tool_call_id": call.get("id"), "content": content}
                    )
        return "Stopped: step limit reached."

    async def _count_tokens(self, http: Any, tools: list[dict[str, Any]]) -> int | None:
        """The tokens of the tool definitions, by the server's own tokenizer (once a run:
        every request of the run sends the same definitions)."""
        if not self.settings.tokenize_url:
            return None
        text = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
        response = await http.post(self.settings.tokenize_url, json={"content": text})
        response.raise_for_status()
        tokens = response.json().get("tokens")
        return len(tokens) if isinstance(tokens, list) else None

    async def _complete(
        self,
        http: Any,
        session: McpSession,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        step: int,
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "tools": tools,
            "max_tokens": self.settings.max_tokens,
            # Reproducible per run and step, different across repeats.
            "seed": self.random.getrandbits(31) ^ step,
        }
        if self.settings.temperature is not None:
            payload["temperature"] = self.settings.temperature
        url = f"{self.settings.base_url}/chat/completions"
        clock = time.perf_counter()
        for attempt in range(4):
            response = await http.post(url, json=payload)
            if response.status_code in {429, 500, 502, 503, 504} and attempt < 3:
                await asyncio.sleep(2**attempt)
                continue
            response.raise_for_status()
            break
        session.trace.llm_latency_ms += (time.perf_counter() - clock) * 1000
        data = response.json()
        session.trace.llm_requests += 1
        for key, value in usage_of(data).items():
            session.trace.llm_usage[key] = session.trace.llm_usage.get(key, 0) + value
        if isinstance(data.get("model"), str) and data["model"]:
            session.trace.llm_model = data["model"]
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
