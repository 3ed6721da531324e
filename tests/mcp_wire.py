"""Shared by the MCP tests: how each revision talks, and the protocol's own checks.

Every answer a test sees goes through :func:`check`, which validates it with the
``mcp`` package's pydantic models for the revision it was spoken in — not with
expectations of our own.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from django.test import Client
from jsonschema import Draft202012Validator
from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
OLDER = "2025-06-18"


def modern_meta() -> dict[str, Any]:
    return {
        mcp_types.PROTOCOL_VERSION_META_KEY: MODERN,
        mcp_types.CLIENT_INFO_META_KEY: {"name": "tests", "version": "1"},
        mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
    }


def check(method: str, version: str, envelope: dict[str, Any]) -> dict[str, Any]:
    """Validate one JSON-RPC answer with the protocol's types for ``version``; return it."""
    message = mcp_types.jsonrpc_message_adapter.validate_python(envelope)
    if "error" in envelope:
        assert isinstance(message, mcp_types.JSONRPCError), envelope
        if envelope["error"]["code"] == mcp_types.UNSUPPORTED_PROTOCOL_VERSION:
            mcp_types.UnsupportedProtocolVersionErrorData.model_validate(envelope["error"]["data"])
        return envelope
    assert isinstance(message, mcp_types.JSONRPCResponse), envelope
    result = envelope["result"]
    methods.parse_server_result(method, version, result)
    if version in MODERN_PROTOCOL_VERSIONS:
        assert result["resultType"] == "complete"
        assert mcp_types.SERVER_INFO_META_KEY in result["_meta"]
    else:
        # Fields of a later revision are not part of an earlier one's contract.
        assert not {"resultType", "ttlMs", "cacheScope"} & set(result), result
    return envelope


def result(client: Any, path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One JSON-RPC call through a logged-in Django or DRF test client (revision
    ``LEGACY``, plain JSON): the answer checked with the protocol's types, its result."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post(
        path,
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": LEGACY},
    )
    assert response.status_code == 200, response.content
    answered: dict[str, Any] = check(method, LEGACY, response.json())["result"]
    return answered


def conforms(schema: dict[str, Any], value: Any) -> bool:
    """Whether ``value`` satisfies a tool's outputSchema (as the SDK client checks it)."""
    return Draft202012Validator(schema).is_valid(value)


class Wire:
    """One caller speaking JSON-RPC to one MCP endpoint through Django's test client.

    Keeps every byte it received (``text()``), for the tests that look for leaks.
    """

    def __init__(
        self, token: str | None, *, path: str = "/mcp", version: str | None = LEGACY
    ) -> None:
        self.path = path
        self.client = Client()
        self.token = token
        self.version = version
        self.received: list[bytes] = []
        self.next_id = 0

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        return {**headers, **(extra or {})}

    def post(
        self,
        body: Any,
        *,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        data = body if isinstance(body, bytes) else json.dumps(body)
        response = self.client.post(
            self.path, data=data, content_type=content_type, headers=self.headers(headers)
        )
        lines = [f"{name}: {value}" for name, value in response.items()]
        self.received.append("\n".join(lines).encode() + b"\n\n" + response.content)
        return response

    def request(self, method: str, params: dict[str, Any] | None = None, *, id: Any = None) -> Any:
        """Send one request (ids count up from 1 unless given), in the wire's revision."""
        if id is None:
            self.next_id += 1
            id = self.next_id
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        headers: dict[str, str] = {}
        if self.version == MODERN:
            given = (params or {}).get("_meta", {})
            meta = {**modern_meta(), **given} if isinstance(given, dict) else given
            params = {**(params or {}), "_meta": meta}
            headers = {"Mcp-Method": method}
            name = params.get("name") if method == "tools/call" else params.get("uri")
            if isinstance(name, str):
                headers["Mcp-Name"] = name
        if params is not None:
            body["params"] = params
        return self.post(body, headers=headers)

    def call(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> dict:
        response = self.request(method, params, **kwargs)
        assert response["Content-Type"] == "application/json", response
        return check(method, self.version or LEGACY, response.json())

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        envelope = self.call(method, params)
        assert "result" in envelope, envelope
        return envelope["result"]

    def tool(self, name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict:
        return self.result("tools/call", {"name": name, "arguments": arguments or {}, **params})

    def tools(self) -> list[dict[str, Any]]:
        """Every tool, following the cursors."""
        tools: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            result = self.result("tools/list", params)
            tools += result["tools"]
            if "nextCursor" not in result:
                return tools
            params = {"cursor": result["nextCursor"]}

    def tools_bytes(self) -> bytes:
        """The raw ``tools/list`` answer, always under the same request id."""
        response = self.request("tools/list", {}, id="tools")
        assert response.status_code == 200
        check("tools/list", self.version or LEGACY, response.json())
        return response.content

    def text(self) -> str:
        return b"\n".join(self.received).decode()
