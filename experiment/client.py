"""An MCP client for agents: the official SDK, with every HTTP exchange recorded.

Agents talk to the server only through :class:`McpSession`. It lists the tools once
(the agent's frozen list; a host may list them again, :meth:`McpSession.refresh_tools`),
calls tools, and lets the runner step in at two moments (:class:`Hooks`): after the tool
list was first taken, and before each tool call. Every byte sent and received is kept in
a :class:`Trace`; the metrics are computed from it, never from what an agent says it
did, and the run's transcript is written from it.
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "Exchange",
    "Hooks",
    "McpSession",
    "Outcome",
    "Trace",
    "context_text",
    "tool_definitions",
]


class Hooks(Protocol):
    """Where the runner may change the world during a run (tasks R*, N1)."""

    async def after_list_tools(self) -> None: ...

    async def before_call(self, name: str, arguments: dict[str, Any]) -> None: ...


class NoHooks:
    async def after_list_tools(self) -> None:
        return None

    async def before_call(self, name: str, arguments: dict[str, Any]) -> None:
        return None


@dataclass
class Exchange:
    """One HTTP request to the MCP endpoint and its answer, as they went over the wire."""

    method: str
    params: dict[str, Any]
    status: int
    request_bytes: int
    response_bytes: int
    latency_ms: float
    body: bytes
    envelope: dict[str, Any] | None

    @property
    def result(self) -> dict[str, Any] | None:
        if self.envelope is None:
            return None
        result = self.envelope.get("result")
        return result if isinstance(result, dict) else None

    @property
    def error(self) -> dict[str, Any] | None:
        if self.envelope is None:
            return None
        error = self.envelope.get("error")
        return error if isinstance(error, dict) else None


@dataclass
class Trace:
    """Everything that happened in one run, for :mod:`experiment.metrics`."""

    exchanges: list[Exchange] = field(default_factory=list)
    # What the agent placed in its context before its first step.
    instructions: str = ""
    schemas_text: str = ""
    # Calls the agent's host refused itself, never sent: a distractor tool, a tool it
    # does not know (or does not show), arguments that are not a JSON object.
    local_refusals: list[tuple[str, str]] = field(default_factory=list)
    # Where each local refusal fell among the exchanges (how many had been recorded).
    local_refusal_at: list[int] = field(default_factory=list)
    # What an LLM endpoint reported, summed over the session: tokens (``prompt``,
    # ``cached``, ``completion``), requests, the model's time, the tokens of the tool
    # definitions sent, and tool calls repaired from the text of an answer.
    llm_usage: dict[str, int] = field(default_factory=dict)
    llm_requests: int = 0
    llm_latency_ms: float = 0.0
    llm_schema_tokens: int = 0
    llm_repairs: int = 0
    llm_model: str = ""
    # Answers that tried to be a tool call and could not be read (the host said so).
    llm_unparsed: int = 0
    # The conversation as the model saw it (LLM agents): every request and response,
    # see experiment.agents.llm.LlmAgent; None for an agent without a model.
    conversation: dict[str, Any] | None = None

    def refuse_locally(self, name: str, why: str) -> None:
        self.local_refusals.append((name, why))
        self.local_refusal_at.append(len(self.exchanges))


@dataclass(frozen=True)
class Outcome:
    """What a tool call gave the agent."""

    ok: bool
    body: dict[str, Any] | None
    text: str
    protocol_error: dict[str, Any] | None = None
    # The CallToolResult as the server sent it (None for a protocol error).
    result: dict[str, Any] | None = None

    @property
    def code(self) -> str | None:
        if self.body is None or self.ok:
            return None
        code = self.body.get("code")
        return code if isinstance(code, str) else None

    @property
    def reason(self) -> str | None:
        if self.body is None:
            return None
        reason = self.body.get("reason")
        return reason if isinstance(reason, str) else None


def context_text(result: dict[str, Any] | None, error: dict[str, Any] | None = None) -> str:
    """The text a host places in the model's context for one tool result.

    The text blocks of the result (the server puts the same JSON there as in
    ``structuredContent``), other blocks as their JSON; a protocol error as its JSON.
    """
    if error is not None:
        return json.dumps(error, separators=(",", ":"), ensure_ascii=False)
    if result is None:
        return ""
    parts = []
    for block in result.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(parts)


def tool_definitions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools as a chat model receives them (OpenAI function calling).

    Name, description and input schema; the output schema and annotations stay with the
    host, and so does ``$schema`` (some OpenAI-compatible servers refuse it).
    """
    definitions = []
    for tool in tools:
        parameters = dict(tool.get("inputSchema") or {"type": "object"})
        parameters.pop("$schema", None)
        definitions.append(
            {
                "type": "function",
                "function": {
                    "name": tool["name"],
                    "description": tool.get("description") or tool.get("title") or "",
                    "parameters": parameters,
                },
            }
        )
    return definitions


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# The SDK validates every tool result against the tool's output schema with a validator
# it compiles once per session and tool, checking the schema against the JSON Schema
# metaschema first: a fifth of a scripted run's time, since every run opens sessions of
# its own. Compiled validators are kept here across sessions, by the schema's bytes, and
# handed to each new session (the SDK's cache of them, which it evicts when a listing
# changes a tool's schema): the same validation, compiled once per process.
_COMPILED: dict[str, Any] = {}


def _reuse_compiled_validator(client: Any, name: str) -> str | None:
    session = client.session
    schemas = getattr(session, "_tool_output_schemas", None)
    validators = getattr(session, "_tool_output_validators", None)
    if not isinstance(schemas, dict) or not isinstance(validators, dict):
        return None  # another SDK version: it compiles its own
    schema = schemas.get(name)
    if schema is None or name in validators:
        return None  # nothing to validate, or compiled already in this session
    key = json.dumps(schema, sort_keys=True)  # once per tool and session
    if key in _COMPILED:
        validators[name] = _COMPILED[key]
    return key


def _keep_compiled_validator(client: Any, name: str, key: str | None) -> None:
    validators = getattr(client.session, "_tool_output_validators", None)
    if key is not None and isinstance(validators, dict) and name in validators:
        _COMPILED.setdefault(key, validators[name])


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every session: building one (loading the CA bundle) costs
    about 20 ms, and a run opens a session per user."""
    return ssl.create_default_context()


class McpSession:
    """One agent's connection to one MCP endpoint, as one user."""

    def __init__(
        self, url: str, token: str, *, hooks: Hooks | None = None, mode: str = "auto"
    ) -> None:
        self.url = url
        self.token = token
        self.hooks: Hooks = hooks or NoHooks()
        self.mode = mode
        self.trace = Trace()
        self.tools: list[dict[str, Any]] | None = None
        self._started: dict[int, float] = {}
        self._stack: Any = None
        self._client: Any = None

    async def __aenter__(self) -> McpSession:
        from contextlib import AsyncExitStack

        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        self._stack = AsyncExitStack()
        http = await self._stack.enter_async_context(
            httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {self.token}"},
                event_hooks={"request": [self._on_request], "response": [self._on_response]},
                timeout=60,
                verify=_tls_context(),
            )
        )
        transport = streamable_http_client(self.url, http_client=http)
        self._client = await self._stack.enter_async_context(Client(transport, mode=self.mode))
        self.trace.instructions = self._client.instructions or ""
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    @property
    def instructions(self) -> str:
        return self.trace.instructions

    # --- recording ------------------------------------------------------------------

    async def _on_request(self, request: Any) -> None:
        self._started[id(request)] = time.perf_counter()

    async def _on_response(self, response: Any) -> None:
        await response.aread()
        request = response.request
        started = self._started.pop(id(request), time.perf_counter())
        try:
            sent = json.loads(request.content or b"{}")
        except ValueError:
            sent = {}
        try:
            envelope = json.loads(response.content) if response.content else None
        except ValueError:
            envelope = None
        self.trace.exchanges.append(
            Exchange(
                method=str(sent.get("method", "")),
                params=sent.get("params") if isinstance(sent.get("params"), dict) else {},
                status=response.status_code,
                request_bytes=len(request.content or b""),
                response_bytes=len(response.content or b""),
                latency_ms=(time.perf_counter() - started) * 1000,
                body=response.content or b"",
                envelope=envelope if isinstance(envelope, dict) else None,
            )
        )

    # --- what agents use ------------------------------------------------------------

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools, listed once: later calls return the same (frozen) list."""
        if self.tools is not None:
            return self.tools
        tools = await self._list()
        self.tools = tools
        self.trace.schemas_text = _compact(tool_definitions(tools))
        await self.hooks.after_list_tools()
        return tools

    async def refresh_tools(self) -> list[dict[str, Any]]:
        """``tools/list`` again, past the client's cache of it (``ttlMs``): a host that
        met a tool name it did not know. The list the agent works with from now on."""
        self.tools = await self._list(cache_mode="refresh")
        return self.tools

    async def _list(self, cache_mode: str = "use") -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await self._client.list_tools(cursor=cursor, cache_mode=cache_mode)
            tools.extend(
                tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                for tool in page.tools
            )
            cursor = page.next_cursor
            if cursor is None:
                break
        return tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        from mcp.shared.exceptions import MCPError

        await self.hooks.before_call(name, arguments)
        key = _reuse_compiled_validator(self._client, name)
        try:
            result = await self._client.call_tool(name, arguments)
        except MCPError as error:
            data = {"code": error.error.code, "message": error.error.message}
            return Outcome(ok=False, body=None, text=context_text(None, data), protocol_error=data)
        _keep_compiled_validator(self._client, name, key)
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        body = dumped.get("structuredContent")
        return Outcome(
            ok=not bool(dumped.get("isError")),
            body=body if isinstance(body, dict) else None,
            text=context_text(dumped),
            result=dumped,
        )
