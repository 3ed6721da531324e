"""Tool results as the agent frameworks hand them to a model, against a live server.

Each framework turns a ``CallToolResult`` into the model's input its own way (read in
their sources): pydantic-ai (``_map_mcp_call_tool_result``) hands over
``structuredContent`` only when every content block is text, else the blocks one by
one — a ``resource_link`` beside the JSON made it ``[representation, url]``;
openai-agents (``MCPUtil.invoke_mcp_tool``) hands over the blocks, as text, unless the
server is configured with ``use_structured_content``; fastmcp's ``Client`` gives
``.data``, hydrated from ``structuredContent`` through the tool's ``outputSchema``, and
the blocks. Each test makes a real call and checks that what reaches the model is the
representation, exactly (affordances.mcp.tools.tool_result).

The clients are async; the ORM is touched only before ``asyncio.run`` (Django refuses
it inside an event loop).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo

# transaction=True: the live server's threads must see the demo data. serialized_rollback:
# the flush after a transactional test drops the groups the migrations created.
pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class Live:
    """The live server, one caller (support) and one order, with its REST representation."""

    def __init__(self, url: str, demo: Demo) -> None:
        self.mcp = f"{url}/mcp"
        self.headers = {"Authorization": f"Bearer {AccessToken.for_user(demo.users['support'])}"}
        self.pk = demo.orders["demo-01"].pk
        response = httpx2.get(f"{url}/api/orders/{self.pk}/", headers=self.headers, timeout=30)
        assert response.status_code == 200, response.text
        self.representation: dict[str, Any] = response.json()


@pytest.fixture
def live(live_server: Any, demo: Demo) -> Live:
    return Live(live_server.url, demo)


def test_pydantic_ai_hands_the_model_the_representation(live: Live) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    handed: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("get_order", {"orderId": live.pk})])
        handed.extend(part.content for part in returns)
        return ModelResponse(parts=[TextPart("read")])

    async def scenario() -> None:
        toolset = MCPToolset(live.mcp, headers=live.headers)
        agent = Agent(FunctionModel(model), toolsets=[toolset])
        async with agent:
            await agent.run("Read the order.")

    asyncio.run(scenario())

    assert handed == [live.representation]


@pytest.mark.parametrize("structured", [False, True])
def test_openai_agents_hands_the_model_the_representation(live: Live, structured: bool) -> None:
    from agents import RunContextWrapper
    from agents.mcp import MCPServerStreamableHttp, MCPUtil

    async def scenario() -> Any:
        params = {"url": live.mcp, "headers": live.headers, "timeout": 30}
        async with MCPServerStreamableHttp(
            params,  # type: ignore[arg-type]
            use_structured_content=structured,
            client_session_timeout_seconds=30,
        ) as server:
            tools = {tool.name: tool for tool in await server.list_tools()}
            return await MCPUtil.invoke_mcp_tool(
                server,
                tools["get_order"],
                RunContextWrapper(context=None),
                json.dumps({"orderId": live.pk}),
            )

    output = asyncio.run(scenario())

    # One output, the representation as JSON text: not a list with the link as a second.
    if structured:
        assert isinstance(output, str)
        assert json.loads(output) == live.representation
    else:
        assert isinstance(output, dict) and output["type"] == "text", output
        assert json.loads(output["text"]) == live.representation


def test_fastmcp_gives_the_representation_as_data_and_as_the_first_block(live: Live) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StreamableHttpTransport

    async def scenario() -> Any:
        async with Client(StreamableHttpTransport(live.mcp, headers=live.headers)) as client:
            return await client.call_tool("get_order", {"orderId": live.pk})

    result = asyncio.run(scenario())

    assert result.is_error is False
    assert result.structured_content == live.representation
    assert [block.type for block in result.content] == ["text"]
    assert json.loads(result.content[0].text) == live.representation
    # .data: structuredContent hydrated through the tool's outputSchema (its anyOf of
    # the representation and the problem): the representation, as a dict.
    assert result.data == live.representation
