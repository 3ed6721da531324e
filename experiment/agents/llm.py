"""An agent driven by a chat model behind any OpenAI-compatible ``/chat/completions``.

The model gets the same system prompt and procedure on every interface (plus a note on
what that interface's answers contain: :mod:`experiment.host`), the task's goal, and the
tools the agent listed at the start, as functions (B-focus: those the host shows). Each
tool call it makes is run over MCP and its result text goes back as a ``tool`` message,
until it answers without a tool call or ``max_steps`` is reached. A call the host cannot
run (an unknown tool, unreadable arguments, a message that tries to be a call and cannot
be read) goes back to the model as an error; it never ends the run.

ToolSandbox-style perturbations: ``scramble_names`` renames every tool consistently
(``tool_3fa2…``) and maps calls back — names in tool results are renamed too, so the
world stays consistent; ``distractors`` adds N plausible tools that do not exist on the
server: calling one is an invalid transition and the model is told it failed.

Small local models often answer a tool request with the call as JSON in ``content``
(a fenced ```json block, ``<tool_call>`` tags, or bare) instead of ``tool_calls``: a JSON
object that is exactly a call counts as that call (:func:`experiment.host.parse_calls`),
and every such repair is counted per run, on every interface alike.

Per request the agent records what the server counted (:func:`usage_of`): prompt
tokens, those served from the prompt cache, completion tokens, and the model's time.

Configuration comes from the environment: ``OPENAI_BASE_URL`` (e.g.
``https://api.openai.com/v1``), ``OPENAI_MODEL``, ``OPENAI_API_KEY``; optionally
``OPENAI_TEMPERATURE``. ``run_experiment --local-model`` sets them for its own server.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

from experiment.agents.base import Brief
from experiment.client import McpSession, tool_definitions
from experiment.host import (
    UNREADABLE,
    Focus,
    affordance_names,
    host_error,
    instructions,
    neutral_definitions,
    parse_calls,
    shown_result,
    unknown_tool,
)

__all__ = [
    "DISTRACTORS",
    "SYSTEM_PROMPT",
    "LlmAgent",
    "LlmSettings",
    "ModelUnavailable",
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


class ModelUnavailable(RuntimeError):
    """The model's endpoint could not be reached or kept failing (5xx): the run says
    nothing about the interface and is done again (``--resume``), never counted."""


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class LlmAgent:
    """The host of a chat model: it lists the tools, shows the model what the host
    shows (:mod:`experiment.host`), runs the calls the model makes and records the whole
    conversation in the session's trace (``trace.conversation``).

    Per run the conversation keeps every request exactly — each request's messages are
    a prefix of the final ``messages`` (``requests[i].messages`` long), its tools one of
    ``tools`` by digest — and every response as the endpoint sent it.
    """

    name = "llm"

    def __init__(
        self, settings: LlmSettings, *, repeat: int = 0, transport: Any | None = None
    ) -> None:
        self.settings = settings
        self.random = random.Random(f"{settings.seed}:{repeat}")
        # An httpx2 transport for the model's endpoint (the oracle's is in-process).
        self.transport = transport
        self._token_counts: dict[str, int | None] = {}

    # --- the tools the model is shown --------------------------------------------------

    def _adopt(self, listed: list[dict[str, Any]]) -> None:
        """Take the server's tools (again, after a refresh): new ones are defined (and
        renamed, under scrambling) once, in the server's order."""
        for tool in listed:
            name = tool["name"]
            if name in self.definitions:
                continue
            [definition] = neutral_definitions(tool_definitions([tool]), [tool])
            if self.settings.scramble_names:
                self.renaming.shown[name] = f"tool_{self.random.getrandbits(32):08x}"
                definition["function"]["name"] = self.renaming.shown[name]
            self.definitions[name] = definition
            self.server_tools[name] = tool
            self.order.append(name)

    def _distractors(self) -> None:
        for fake in self.random.sample(
            DISTRACTORS, min(self.settings.distractors, len(DISTRACTORS))
        ):
            name = fake["name"]
            self.distractors.add(name)
            self.definitions[name] = {
                "type": "function",
                "function": {
                    "name": name,
                    "description": fake["description"],
                    "parameters": {
                        "type": "object",
                        "properties": fake["parameters"],
                        "required": ["orderId"],
                    },
                },
            }
            if self.settings.scramble_names:
                self.renaming.shown[name] = f"tool_{self.random.getrandbits(32):08x}"
                self.definitions[name]["function"]["name"] = self.renaming.shown[name]
            self.order.append(name)
        if self.settings.scramble_names:
            # Once, at the start; tools met later (a refreshed list) come last.
            self.random.shuffle(self.order)

    def _shown(self) -> list[dict[str, Any]]:
        """The definitions the next request sends: every tool, or (B-focus) the focus."""
        return [
            self.definitions[name]
            for name in self.order
            if self.focus is None
            or name in self.distractors
            or self.focus.shows(self.server_tools[name])
        ]

    # --- the run ------------------------------------------------------------------------

    async def run(self, session: McpSession, brief: Brief) -> str:
        import httpx2

        self.definitions: dict[str, dict[str, Any]] = {}
        self.server_tools: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.distractors: set[str] = set()
        self.renaming = Renaming()
        self.focus = Focus() if brief.interface == "B-focus" else None
        self._adopt(await session.list_tools())
        self._distractors()

        system = instructions(SYSTEM_PROMPT, brief.interface)
        session.trace.instructions = self.renaming.outward(system)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": session.trace.instructions},
            {"role": "user", "content": f"You are logged in as {brief.user}. Task: {brief.goal}"},
        ]
        self.conversation: dict[str, Any] = {
            "messages": messages,
            "requests": [],
            "tools": {},
            "events": [],
        }
        session.trace.conversation = self.conversation
        headers = (
            {"Authorization": f"Bearer {self.settings.api_key}"} if self.settings.api_key else {}
        )
        options: dict[str, Any] = {"headers": headers, "timeout": self.settings.timeout}
        if self.transport is not None:
            options["transport"] = self.transport
        async with httpx2.AsyncClient(**options) as http:
            for step in range(self.settings.max_steps):
                tools = self._shown()
                self.shown_names = {definition["function"]["name"] for definition in tools}
                session.trace.schemas_text = json.dumps(
                    tools, separators=(",", ":"), ensure_ascii=False
                )
                schema_tokens = await self._count_tokens(http, tools)
                message = await self._complete(http, session, messages, tools, step)
                if schema_tokens is not None:
                    session.trace.llm_schema_tokens += schema_tokens
                calls = message.get("tool_calls") or []
                if not calls:
                    parsed = parse_calls(message.get("content"))
                    if parsed.calls:
                        calls = parsed.calls
                        session.trace.llm_repairs += len(calls)
                        # The calls as the chat template writes them, not the text twice.
                        message = {"role": "assistant", "content": None, "tool_calls": calls}
                    elif parsed.unreadable is not None:
                        session.trace.llm_unparsed += 1
                        self._event(step, "unreadable", why=parsed.unreadable)
                        messages.append(message)
                        messages.append(
                            {"role": "user", "content": UNREADABLE.format(why=parsed.unreadable)}
                        )
                        continue
                messages.append(message)
                if not calls:
                    return str(message.get("content") or "")
                for call in calls:
                    content = await self._run_call(session, call, step)
                    messages.append(
                        {"role": "tool", "tool_call_id": call.get("id"), "content": content}
                    )
        return "Stopped: step limit reached."

    def _event(self, step: int, kind: str, **facts: Any) -> None:
        self.conversation["events"].append({"turn": step, "kind": kind, **facts})

    async def _count_tokens(self, http: Any, tools: list[dict[str, Any]]) -> int | None:
        """The tokens of the tool definitions, by the server's own tokenizer (once per
        distinct list: B-focus and a refreshed list change it within a run)."""
        if not self.settings.tokenize_url:
            return None
        key = _digest(tools)
        if key not in self._token_counts:
            text = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
            try:
                response = await http.post(self.settings.tokenize_url, json={"content": text})
                response.raise_for_status()
            except Exception as exc:  # network or server: not the interface's doing
                raise ModelUnavailable(f"tokenize: {exc}") from exc
            tokens = response.json().get("tokens")
            self._token_counts[key] = len(tokens) if isinstance(tokens, list) else None
        return self._token_counts[key]

    async def _complete(
        self,
        http: Any,
        session: McpSession,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        step: int,
    ) -> dict[str, Any]:
        import httpx2

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
        digest = _digest(tools)
        self.conversation["tools"].setdefault(digest, tools)
        url = f"{self.settings.base_url}/chat/completions"
        clock = time.perf_counter()
        response = None
        for attempt in range(4):
            try:
                response = await http.post(url, json=payload)
            except httpx2.TransportError as exc:
                if attempt == 3:
                    raise ModelUnavailable(f"{url}: {exc}") from exc
                await asyncio.sleep(2**attempt)
                continue
            if response.status_code in {429, 500, 502, 503, 504}:
                if attempt == 3:
                    raise ModelUnavailable(f"{url} answered {response.status_code}")
                await asyncio.sleep(2**attempt)
                continue
            break
        assert response is not None
        latency = (time.perf_counter() - clock) * 1000
        session.trace.llm_latency_ms += latency
        # A 4xx (a context too long, a request refused) is the run's own failure.
        response.raise_for_status()
        data = response.json()
        session.trace.llm_requests += 1
        usage = usage_of(data)
        for key, value in usage.items():
            session.trace.llm_usage[key] = session.trace.llm_usage.get(key, 0) + value
        if isinstance(data.get("model"), str) and data["model"]:
            session.trace.llm_model = data["model"]
        message = dict(data["choices"][0]["message"])
        self.conversation["requests"].append(
            {
                "turn": step,
                "messages": len(messages),
                "tools": digest,
                "seed": payload["seed"],
                "response": message,
                "finishReason": data["choices"][0].get("finish_reason"),
                "usage": usage,
                "latencyMs": round(latency, 1),
            }
        )
        # Only what the API takes back in the next request.
        kept = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
        return kept

    async def _run_call(self, session: McpSession, call: dict[str, Any], step: int) -> str:
        function = call.get("function") or {}
        shown = str(function.get("name", ""))
        name = self.renaming.real.get(shown, shown)
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            session.trace.refuse_locally(name, "malformed arguments")
            return host_error("The arguments were not a JSON object; nothing was done.")
        if name in self.distractors:
            session.trace.refuse_locally(name, "distractor")
            return DISTRACTOR_ANSWER
        if shown not in self.shown_names:
            if self.focus is not None and name in self.server_tools:
                # B-focus: a real tool the host did not show (yet). The server decides,
                # as on B: "unknown tool" would be false and would withhold the reason
                # for a refusal that B's model is given.
                self._event(step, "hidden tool forwarded", name=name)
            else:
                # Not among the tools the host gave the model, nor on the server.
                session.trace.refuse_locally(name, "unknown tool")
                return self.renaming.outward(unknown_tool(shown))
        outcome = await session.call(name, arguments)
        if outcome.protocol_error is not None:
            error = outcome.protocol_error
            said = str(error.get("message", "")).replace(_LIST_AGAIN, "").strip()
            text = host_error(f"{said} Nothing was done.".strip(), code=error.get("code"))
            return self.renaming.outward(text)
        text = shown_result(outcome.result)
        try:
            seen = json.loads(text)
        except ValueError:
            seen = None
        # Affordances name tools this host may not know (an operation switched on since
        # the list was taken): list the tools again, as a host told of a change would.
        unknown = affordance_names(seen) - set(self.server_tools)
        if unknown:
            before = set(self.server_tools)
            self._adopt(await session.refresh_tools())
            self._event(
                step,
                "tools refreshed",
                named=sorted(unknown),
                added=sorted(set(self.server_tools) - before),
            )
        if self.focus is not None:
            self.focus.learn(seen)
        return self.renaming.outward(text)


# What the servers add to an unknown tool's error; a chat model cannot call tools/list.
_LIST_AGAIN = "Call tools/list for the tools you may use."
