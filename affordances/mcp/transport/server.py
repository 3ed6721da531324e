"""One JSON-RPC dispatcher for an MCP server; the application supplies the methods.

The server answers the lifecycle (``initialize``, ``server/discover``, ``ping``), reads
the protocol revision of each request, dresses results for it and turns errors into
JSON-RPC errors with the revision's HTTP status. It holds no state between requests:
the revision, the caller and everything else come from the request at hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable, Mapping
from dataclasses import dataclass, field
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

__all__ = ["Call", "Method", "Reply", "Server", "StreamMethod"]


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


# A stream's messages, in order: JSON-RPC notifications, then (on a graceful close) the
# request's response; None asks for a keep-alive. Ending without a response is an abrupt
# close.
Messages = AsyncIterator[dict[str, Any] | None]


@dataclass(frozen=True)
class StreamMethod:
    """A method whose response is a stream (2026-07-28 ``subscriptions/listen``).

    ``handler(call, params, request_id)`` runs synchronously, where every other handler
    runs: it checks the request and raises its JSON-RPC errors there (answered as JSON,
    no stream opened), then returns the stream's messages, read on the event loop.
    """

    handler: Callable[[Call, dict[str, Any], Any], Messages]


@dataclass(frozen=True)
class Reply:
    """An HTTP answer to one message: a JSON-RPC envelope, none (202), or a stream."""

    status: int
    body: dict[str, Any] | None = None
    stream: Messages | None = None


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
    # Methods answered with a stream, served only where the deployment streams (ASGI) and
    # only to 2026-07-28 requests; elsewhere they answer "Method not found" with a reason.
    streams: Mapping[str, StreamMethod] = field(default_factory=dict)
    # Capabilities true only where the streams are served (``listChanged``,
    # ``subscribe``), merged over ``capabilities`` in that case.
    streaming_capabilities: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    # The answer where a stream method is not served.
    not_streaming: str = "this deployment serves no streams"

    def capabilities_for(self, revision: Revision | None, *, streaming: bool) -> dict[str, Any]:
        """What this server does for a request of ``revision``: declared truthfully, the
        streams' capabilities only where they are served."""
        if not (streaming and revision is not None and revision.modern and self.streams):
            return dict(self.capabilities)
        merged = dict(self.capabilities)
        for key, values in self.streaming_capabilities.items():
            merged[key] = {**merged.get(key, {}), **values}
        return merged

    def _table(self, revision: Revision) -> Mapping[str, Method]:
        table = dict(self.methods)
        if not revision.modern:
            table["ping"] = Method(lambda call, params: {})
        return table

    def dispatch(
        self,
        message: Message,
        *,
        headers: Mapping[str, str],
        request: Any,
        user: Any,
        streaming: bool = False,
    ) -> Reply:
        """Answer ``message``; ``streaming``: whether this deployment can hold a stream open
        (an ASGI server) — only then are stream methods served and their capabilities
        declared."""
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
            streamed = self.streams.get(message.method or "") if revision.modern else None
            if streamed is not None:
                if not streaming:
                    raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {self.not_streaming}")
                call = Call(request=request, user=user, revision=revision)
                return Reply(200, stream=streamed.handler(call, message.params, message.id))
            if revision.modern and message.method == "server/discover":
                result = self._discover(streaming, revision)
                return Reply(200, result_response(message.id, self._dressed(revision, result)))
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

    def _dressed(self, revision: Revision, result: dict[str, Any]) -> dict[str, Any]:
        return revision.dress(
            result,
            server_info=self.server_info,
            cache=CacheHint(self.discover_ttl_ms, "public"),
        )

    def _discover(self, streaming: bool, revision: Revision) -> dict[str, Any]:
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities_for(revision, streaming=streaming),
            "instructions": self.instructions,
        }
