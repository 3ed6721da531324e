"""One JSON-RPC dispatcher for an MCP server; the application supplies the methods.

The server answers the lifecycle (``initialize``, ``server/discover``, ``ping``), reads
the protocol revision of each request, dresses results for it and turns errors into
JSON-RPC errors with the revision's HTTP status. It holds no state between requests:
the revision, the caller and everything else come from the request at hand.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from affordances.mcp.transport.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    EncodedJson,
    JsonRpcError,
    Message,
    dumps,
    error_response,
    result_response,
)
from affordances.mcp.transport.protocol import (
    HANDSHAKE_VERSIONS,
    SUPPORTED_VERSIONS,
    CacheHint,
    Revision,
    negotiate,
    resolve,
)

__all__ = ["Call", "Method", "Reply", "Server"]


@dataclass(frozen=True)
class Call:
    """One request as a handler sees it: the HTTP request, the caller, the revision."""

    request: Any
    user: Any
    revision: Revision


Handler = Callable[[Call, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Method:
    """A method the application serves, and the cache hint of its results (2026-07-28).

    ``memo_key``: for a result that depends on nothing but what the key names (and on
    the method and revision), the key — the result is then built and encoded once.
    """

    handler: Handler
    cache: CacheHint | None = None
    memo_key: Callable[[Call, dict[str, Any]], Hashable] | None = None


@dataclass(frozen=True)
class Reply:
    """An HTTP answer to one message: a JSON-RPC envelope, or none (202)."""

    status: int
    body: dict[str, Any] | None = None


@dataclass(frozen=True)
class Server:
    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str
    methods: Mapping[str, Method]
    # How long a caller may cache server/discover (the capabilities change with deploys).
    discover_ttl_ms: int = 300_000
    # Where results with a ``memo_key`` are kept: ``memoize(key, build)`` answers the
    # stored value for ``key``, or builds, stores and answers it. The application
    # chooses the store (and its bounds); without one, every result is built anew.
    memoize: Callable[[Hashable, Callable[[], EncodedJson]], EncodedJson] | None = None

    def _table(self, revision: Revision) -> Mapping[str, Method]:
        table = dict(self.methods)
        if revision.modern:
            table["server/discover"] = Method(
                self._discover, CacheHint(self.discover_ttl_ms, "public")
            )
        else:
            table["ping"] = Method(lambda call, params: {})
        return table

    def dispatch(
        self, message: Message, *, headers: Mapping[str, str], request: Any, user: Any
    ) -> Reply:
        if message.kind != "request":
            # Notifications (notifications/initialized, cancelled, …) and stray responses:
            # accepted, nothing to do for a stateless server.
            return Reply(202)
        assert message.id is not None
        revision: Revision | None = None
        try:
            if message.method == "initialize":
                return Reply(200, result_response(message.id, self._initialize(message.params)))
            revision = resolve(message, headers)
            method = self._table(revision).get(message.method or "")
            if method is None:
                raise JsonRpcError(METHOD_NOT_FOUND, "Method not found")
            call = Call(request=request, user=user, revision=revision)
            params = message.params

            def answer() -> dict[str, Any]:
                result = method.handler(call, params)
                return revision.dress(result, server_info=self.server_info, cache=method.cache)

            if method.memo_key is None or self.memoize is None:
                return Reply(200, result_response(message.id, answer()))
            key = ("mcp-result", message.method, revision.version, method.memo_key(call, params))
            encoded = self.memoize(key, lambda: EncodedJson(dumps(answer())))
            return Reply(200, result_response(message.id, encoded))
        except JsonRpcError as error:
            # Before a revision is known (initialize), handshake-era statuses apply.
            status = (revision or Revision(HANDSHAKE_VERSIONS[0])).status_for(error)
            return Reply(status, error_response(message.id, error))

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise JsonRpcError(
                INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string.'
            )
        return {
            "protocolVersion": negotiate(requested),
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
            "instructions": self.instructions,
        }

    def _discover(self, call: Call, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities,
            "instructions": self.instructions,
        }
