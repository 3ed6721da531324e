"""The HTTP side of an MCP endpoint: Streamable HTTP answering plain JSON, stateless.

One exception: a stream method (``subscriptions/listen``) answers Server-Sent Events,
on an ASGI deployment only (:meth:`StreamableHttpView.streams`).

HTTP concerns live here — method, Origin, size, credentials, media types — in the order
the spec lists them, each answered with a JSON-RPC error body. Everything after that is
the :class:`~affordances.mcp.transport.server.Server`'s. No session is kept or issued:
any worker of a multi-process server answers any request. Subclasses say who the caller
is (:meth:`StreamableHttpView.authenticate`) and which server answers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any

from asgiref.sync import SyncToAsync
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.db import connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from affordances.mcp.transport import jsonrpc
from affordances.mcp.transport.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonRpcError
from affordances.mcp.transport.server import Messages, Reply, Server

__all__ = ["MAX_REQUEST_BYTES", "InsufficientScope", "NotAuthenticated", "StreamableHttpView"]

logger = logging.getLogger(__name__)

# One JSON-RPC message is small; anything near this is a mistake or an attack.
MAX_REQUEST_BYTES = 1024 * 1024

_CORS_HEADERS = (
    "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
    "Mcp-Session-Id, Last-Event-ID"
)


class NotAuthenticated(Exception):
    """Credentials were sent but are not valid (401 with ``error="invalid_token"``)."""


class InsufficientScope(Exception):
    """Valid credentials without a scope this request needs: 403 with
    ``error="insufficient_scope"`` and the ``scope`` the request needs (RFC 6750 §3.1).
    Raised by :meth:`StreamableHttpView.authenticate` or by a method's handler."""

    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


def _error(status: int, message: str, *, code: int = INVALID_REQUEST) -> HttpResponse:
    return _json(status, jsonrpc.error_response(None, JsonRpcError(code, message)))


def _json(status: int, body: dict[str, Any]) -> HttpResponse:
    response = HttpResponse(jsonrpc.dumps(body), status=status, content_type="application/json")
    # Answers depend on the caller and on the objects' state: no cache may keep them.
    response["Cache-Control"] = "no-store"
    return response


def _accepts_json(accept: str) -> bool:
    ranges = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(ranges & {"application/json", "application/*", "*/*"})


def _accepts_event_stream(accept: str) -> bool:
    ranges = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(ranges & {"text/event-stream", "text/*", "*/*"})


# A comment line: ignored by every SSE parser, it keeps proxies from closing an idle stream.
KEEP_ALIVE = b": keep-alive\n\n"


def _release_request_thread() -> None:
    """End the thread Django's ASGI handler keeps for this request's sync code.

    Every ASGI request runs its sync code (middleware, the view) in a thread of its own
    (asgiref's ``ThreadSensitiveContext``), kept until the response ends: for a stream,
    for its whole life — a thousand idle listeners were a thousand idle threads, about
    200 kB of memory each (``make bench-listen``). Nothing of the stream needs it once
    its response has started: it reads through short calls of its own in the loop's
    pool. Sync code that still runs in this request (Django closes the response in it)
    gets a thread afresh, ended with the request as before. An executor the project gave
    the context itself is left alone."""
    context = SyncToAsync.thread_sensitive_context.get(None)
    if context is None or getattr(context, "_executor", None) is not None:
        return
    executor = SyncToAsync.context_to_thread_executor.pop(context, None)
    if executor is not None:
        executor.shutdown(wait=False)  # idle: its thread ends at once, the loop never waits


async def _events(messages: Messages) -> AsyncIterator[bytes]:
    """The stream's messages as Server-Sent Events (``event: message``, no ids: a stream
    is not resumed, its client listens again)."""
    _release_request_thread()
    async for message in messages:
        if message is None:
            yield KEEP_ALIVE
        else:
            yield b"event: message\ndata: " + jsonrpc.dumps(message).encode() + b"\n\n"


@method_decorator(csrf_exempt, name="dispatch")  # bearer tokens, not cookies
class StreamableHttpView(View):
    """One JSON-RPC message in, one JSON answer out."""

    max_request_bytes: int = MAX_REQUEST_BYTES

    def server(self) -> Server:
        raise NotImplementedError

    def streams(self, request: HttpRequest) -> bool:
        """Whether this deployment can hold a response open on the event loop: only
        under ASGI. A WSGI worker held by an open stream would serve nothing else, so
        there the stream methods answer an error (and the capabilities say so)."""
        return isinstance(request, ASGIRequest)

    def allowed_origins(self) -> Iterable[str]:
        """Origins besides the server's own that may call the endpoint."""
        return ()

    def authenticate(self, request: HttpRequest) -> tuple[Any, Any] | None:
        """``(user, request)`` for valid credentials, None for none; raise
        :class:`NotAuthenticated` for invalid ones. The request returned is the one
        handlers get (a DRF request, say)."""
        raise NotImplementedError

    def challenge(self, request: HttpRequest) -> str:
        """The ``WWW-Authenticate`` challenge of a 401: the scheme (and its parameters)
        the endpoint takes credentials in."""
        return 'Bearer realm="mcp"'

    def scope_challenge(self, request: HttpRequest, scope: str) -> str:
        """The ``WWW-Authenticate`` challenge of a 403 for a missing scope."""
        return f'Bearer error="insufficient_scope", scope="{scope}"'

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        origin = request.headers.get("Origin")
        # DNS rebinding: a page on another origin must not drive a local server.
        if origin is not None and not self._origin_allowed(request, origin):
            return _error(403, "Forbidden: this Origin may not call the MCP endpoint.")
        response: HttpResponseBase
        if request.method == "OPTIONS":
            response = HttpResponse(status=204)
            response["Allow"] = "POST, OPTIONS"
        elif request.method != "POST":
            # No standalone SSE stream (GET) and no sessions to end (DELETE).
            response = _error(405, "Method Not Allowed: send each JSON-RPC message as a POST.")
            response["Allow"] = "POST, OPTIONS"
        else:
            response = self._post(request)
        if origin is not None:
            self._cors(request, response, origin)
        return response

    def _origin_allowed(self, request: HttpRequest, origin: str) -> bool:
        own = f"{request.scheme}://{request.get_host()}"
        allowed = {own.lower(), *(str(o).rstrip("/").lower() for o in self.allowed_origins())}
        return origin.rstrip("/").lower() in allowed

    def _cors(self, request: HttpRequest, response: HttpResponseBase, origin: str) -> None:
        # Browser-based hosts (e.g. the MCP Inspector's direct mode) need these.
        patch_vary_headers(response, ["Origin"])
        response["Access-Control-Allow-Origin"] = origin
        if request.method == "OPTIONS":
            response["Access-Control-Allow-Methods"] = "POST"
            response["Access-Control-Allow-Headers"] = request.headers.get(
                "Access-Control-Request-Headers", _CORS_HEADERS
            )
            response["Access-Control-Max-Age"] = "600"

    def _post(self, request: HttpRequest) -> HttpResponseBase:
        too_large = _error(413, f"Request body too large: at most {self.max_request_bytes} bytes.")
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _error(400, "Invalid Content-Length.")
        # Refused before the credentials are checked or a byte is read.
        if declared > self.max_request_bytes:
            return too_large

        try:
            authenticated = self.authenticate(request)
        except NotAuthenticated:
            # One message for every invalid credential: which one failed is not said.
            return self._unauthorized(
                request, "the access token is invalid or expired.", invalid=True
            )
        except InsufficientScope as missing:
            return self._insufficient_scope(request, missing.scope)
        if authenticated is None:
            scheme = self.challenge(request).split(None, 1)[0]
            return self._unauthorized(request, f"Send Authorization: {scheme} <access token>.")
        user, handler_request = authenticated

        try:
            body = request.body
        except RequestDataTooBig:
            return too_large
        if len(body) > self.max_request_bytes:
            return too_large
        if body and request.content_type != "application/json":
            return _error(415, "Unsupported Media Type: send application/json.")
        accept = request.headers.get("Accept")
        if accept and not _accepts_json(accept):
            return _error(406, "Not Acceptable: this endpoint answers application/json.")

        try:
            message = jsonrpc.parse(body)
        except JsonRpcError as error:
            # Before the message is understood there is no revision: plain 400.
            return _json(400, jsonrpc.error_response(error.id, error))

        try:
            reply = self.server().dispatch(
                message,
                headers=request.headers,
                request=handler_request,
                user=user,
                streaming=self.streams(request),
            )
        except InsufficientScope as missing:
            return self._insufficient_scope(request, missing.scope)
        except Exception:
            logger.exception("MCP %s failed", message.method)
            failure = JsonRpcError(INTERNAL_ERROR, "Internal error")
            reply = Reply(500, jsonrpc.error_response(message.id, failure))
        if reply.stream is not None:
            return self._stream(request, reply.stream)
        if reply.body is None:
            response = HttpResponse(status=reply.status)
            del response["Content-Type"]  # 202: no body, so no media type
            return response
        return _json(reply.status, reply.body)

    def _stream(self, request: HttpRequest, messages: Messages) -> HttpResponseBase:
        if not _accepts_event_stream(request.headers.get("Accept") or "*/*"):
            return _error(406, "Not Acceptable: this method answers text/event-stream.")
        # The request's database connections are not needed while the stream is open (it
        # reads through short calls of its own): closed now, so that a thousand open
        # streams do not hold a thousand connections.
        for connection in connections.all(initialized_only=True):
            if not connection.in_atomic_block:
                connection.close()
        response = StreamingHttpResponse(_events(messages), content_type="text/event-stream")
        response["Cache-Control"] = "no-store"
        response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
        return response

    def _insufficient_scope(self, request: HttpRequest, scope: str) -> HttpResponse:
        response = _error(403, f"Forbidden: this request needs the scope {scope!r}.")
        response["WWW-Authenticate"] = self.scope_challenge(request, scope)
        return response

    def _unauthorized(
        self, request: HttpRequest, detail: str, *, invalid: bool = False
    ) -> HttpResponse:
        response = _error(401, f"Unauthorized: {detail}")
        challenge = self.challenge(request)
        if invalid and challenge.split(None, 1)[0].lower() == "bearer":
            # RFC 6750 §3: say the token was the problem; no error code when none was sent.
            challenge += ', error="invalid_token"'
        response["WWW-Authenticate"] = challenge
        return response
