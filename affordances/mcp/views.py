"""The Django view of an MCP endpoint: Streamable HTTP answering plain JSON, stateless.

HTTP concerns live here — method, Origin, size, bearer token, media types — in the
order the spec lists them, each answered with a JSON-RPC error body. Everything after
that is the dispatcher's. No session is kept or issued: any worker of a multi-process
server answers any request.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework_simplejwt.authentication import JWTAuthentication

from affordances.conf import settings
from affordances.mcp import jsonrpc
from affordances.mcp.dispatch import Reply, dispatcher_for
from affordances.mcp.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, JsonRpcError
from affordances.mcp.profiles import HYBRID, Profile

__all__ = ["MAX_REQUEST_BYTES", "McpView"]

logger = logging.getLogger(__name__)

# One JSON-RPC message is small; anything near this is a mistake or an attack.
MAX_REQUEST_BYTES = 1024 * 1024

_CORS_HEADERS = (
    "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
    "Mcp-Session-Id, Last-Event-ID"
)


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


@method_decorator(csrf_exempt, name="dispatch")  # bearer tokens, not cookies
class McpView(View):
    """``POST /mcp`` (and its siblings): one JSON-RPC message in, one JSON answer out."""

    profile: Profile = HYBRID
    max_request_bytes: int = MAX_REQUEST_BYTES

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        origin = request.headers.get("Origin")
        # DNS rebinding: a page on another origin must not drive a local server.
        if origin is not None and not self._origin_allowed(request, origin):
            return _error(403, "Forbidden: this Origin may not call the MCP endpoint.")
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
        allowed = {own.lower(), *(str(o).rstrip("/").lower() for o in settings.MCP_ALLOWED_ORIGINS)}
        return origin.rstrip("/").lower() in allowed

    def _cors(self, request: HttpRequest, response: HttpResponse, origin: str) -> None:
        # Browser-based hosts (e.g. the MCP Inspector's direct mode) need these.
        patch_vary_headers(response, ["Origin"])
        response["Access-Control-Allow-Origin"] = origin
        if request.method == "OPTIONS":
            response["Access-Control-Allow-Methods"] = "POST"
            response["Access-Control-Allow-Headers"] = request.headers.get(
                "Access-Control-Request-Headers", _CORS_HEADERS
            )
            response["Access-Control-Max-Age"] = "600"

    def _post(self, request: HttpRequest) -> HttpResponse:
        too_large = _error(413, f"Request body too large: at most {self.max_request_bytes} bytes.")
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _error(400, "Invalid Content-Length.")
        # Refused before the token is checked or a byte is read.
        if declared > self.max_request_bytes:
            return too_large

        # A DRF request around the POST: the token is read from it, and serializers build
        # absolute URLs (affordance targets, resource URIs) from it later.
        drf_request = Request(request)
        try:
            authenticated = JWTAuthentication().authenticate(drf_request)
        except AuthenticationFailed as exc:
            detail = exc.detail.get("detail", "") if isinstance(exc.detail, dict) else exc.detail
            return self._unauthorized(str(detail), invalid=True)
        if authenticated is None:
            return self._unauthorized("Send Authorization: Bearer <access token>.")
        user, _token = authenticated

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

        drf_request.user = user
        try:
            reply = dispatcher_for(self.profile).dispatch(
                message, headers=request.headers, request=drf_request, user=user
            )
        except Exception:
            logger.exception("MCP %s failed", message.method)
            failure = JsonRpcError(INTERNAL_ERROR, "Internal error")
            reply = Reply(500, jsonrpc.error_response(message.id, failure))
        if reply.body is None:
            response = HttpResponse(status=reply.status)
            del response["Content-Type"]  # 202: no body, so no media type
            return response
        return _json(reply.status, reply.body)

    def _unauthorized(self, detail: str, *, invalid: bool = False) -> HttpResponse:
        response = _error(401, f"Unauthorized: {detail}")
        challenge = 'Bearer realm="mcp"'
        if invalid:
            # RFC 6750 §3: say the token was the problem; no error code when none was sent.
            challenge += ', error="invalid_token"'
        response["WWW-Authenticate"] = challenge
        return response
