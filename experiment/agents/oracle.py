"""The oracle control: the LLM agent's own code path, its model replaced by the scripted
agent's solution.

:class:`OracleAgent` *is* :class:`~experiment.agents.llm.LlmAgent` — the same host, tool
definitions, instructions, parser, focus, refresh and transcript — talking to a chat
endpoint served in-process (an ``httpx2.MockTransport``) by :class:`OracleModel`. That
"model" runs the scripted agent of the interface (A, B, C; B-compact and B-focus as B)
against :class:`ModelSide`, a session that knows only what the requests bring: the tools
each request defines and the ``tool`` messages the host sends back. Each call the
scripted agent makes becomes the model's next tool call; its final answer, the model's
answer.

So the oracle passes exactly what the interface lets a rule-following agent pass
*through the host*: whatever the host hides, mangles or fails to run shows up as a task
the oracle fails where the scripted agent passes. ``text_calls`` writes the calls into
the answer's text (``<tool_call>`` tags), as small local models do, to run the parser.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from typing import Any

from experiment.agents.base import Brief, ScriptedAgent
from experiment.agents.llm import LlmAgent, LlmSettings
from experiment.client import McpSession, Outcome
from experiment.host import is_problem

__all__ = [
    "ORACLE_MODEL",
    "ModelSide",
    "OracleAgent",
    "OracleModel",
    "oracle_settings",
    "scripted_for",
]

ORACLE_MODEL = "oracle"


def scripted_for(interface: str) -> ScriptedAgent:
    """The scripted baseline of ``interface`` (B's rules on B-compact and B-focus)."""
    from experiment.agents.scripted_a import ScriptedStaticAgent
    from experiment.agents.scripted_b import ScriptedHybridAgent
    from experiment.agents.scripted_c import ScriptedFormsAgent

    if interface == "A":
        return ScriptedStaticAgent()
    if interface == "C":
        return ScriptedFormsAgent()
    return ScriptedHybridAgent()


def outcome_of(text: str) -> Outcome:
    """What a tool message tells an agent: a body, a problem, or the host's error."""
    first = text.splitlines()[0] if text else ""
    try:
        body = json.loads(first) if first else None
    except ValueError:
        body = None
    if isinstance(body, dict) and set(body) == {"error"} and isinstance(body["error"], dict):
        return Outcome(ok=False, body=None, text=text, protocol_error=body["error"])
    if not isinstance(body, dict):
        return Outcome(ok=False, body=None, text=text)
    return Outcome(ok=not is_problem(body), body=body, text=text)


def _as_mcp_tool(definition: dict[str, Any]) -> dict[str, Any]:
    function = definition["function"]
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "inputSchema": function.get("parameters") or {"type": "object"},
    }


class ModelSide:
    """The session a scripted agent gets inside the oracle: tools from the requests,
    calls answered by the host's ``tool`` messages."""

    def __init__(self, model: OracleModel) -> None:
        self.model = model
        self.tools: list[dict[str, Any]] | None = None

    async def list_tools(self) -> list[dict[str, Any]]:
        assert self.tools is not None
        return self.tools

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.model.pending.append(answer)
        await self.model.turns.put(("call", name, arguments))
        return outcome_of(await answer)


class OracleModel:
    """A chat-completions endpoint whose answers are the scripted agent's moves."""

    def __init__(self, brief: Brief, *, text_calls: bool = False) -> None:
        self.brief = brief
        self.text_calls = text_calls
        self.agent = scripted_for(brief.interface)
        self.side = ModelSide(self)
        self.turns: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        self.pending: deque[asyncio.Future[str]] = deque()
        self.task: asyncio.Task[None] | None = None
        self.calls = 0

    async def _drive(self) -> None:
        try:
            answer = await self.agent.run(self.side, self.brief)  # type: ignore[arg-type]
        except Exception as exc:  # the oracle's own failure ends the run, visibly
            answer = f"The oracle failed: {exc!r}"
        await self.turns.put(("answer", answer))

    async def handle(self, request: Any) -> Any:
        import httpx2

        body = json.loads(request.content)
        if self.task is None:
            self.side.tools = [_as_mcp_tool(d) for d in body.get("tools", [])]
            self.task = asyncio.create_task(self._drive())
        else:
            messages = body["messages"]
            last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
            for sent in messages[last + 1 :]:
                if sent.get("role") == "tool" and self.pending:
                    self.pending.popleft().set_result(str(sent.get("content") or ""))
        turn = await self.turns.get()
        if turn[0] == "answer":
            message: dict[str, Any] = {"role": "assistant", "content": turn[1]}
        else:
            _, name, arguments = turn
            message = self._call(name, arguments)
        completion = {
            "id": f"oracle-{self.calls}",
            "object": "chat.completion",
            "model": ORACLE_MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            # A stand-in count (bytes / 4), so the report's token columns have figures.
            "usage": {
                "prompt_tokens": len(request.content) // 4,
                "completion_tokens": len(json.dumps(message)) // 4,
            },
        }
        return httpx2.Response(200, json=completion)

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.text_calls:
            call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
            return {"role": "assistant", "content": f"<tool_call>\n{call}\n</tool_call>"}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"oracle-call-{self.calls}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        }

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


class OracleAgent(LlmAgent):
    """:class:`LlmAgent` with :class:`OracleModel` as its model (see the module)."""

    name = "oracle"

    def __init__(self, settings: LlmSettings, *, repeat: int = 0, text_calls: bool = False):
        super().__init__(settings, repeat=repeat)
        self.text_calls = text_calls

    async def run(self, session: McpSession, brief: Brief) -> str:
        import httpx2

        model = OracleModel(brief, text_calls=self.text_calls)
        self.transport = httpx2.MockTransport(model.handle)
        try:
            return await super().run(session, brief)
        finally:
            await model.close()


def oracle_settings(**options: Any) -> LlmSettings:
    """The oracle's endpoint (never reached over a network) and the LLM agent's options."""
    return LlmSettings(
        base_url="http://oracle.invalid/v1", model=ORACLE_MODEL, api_key="", **options
    )
