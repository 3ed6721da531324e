"""JSON-RPC 2.0 as MCP uses it: one message per POST, errors as values.

Parsing is total: any byte string becomes a :class:`Message` or a :class:`JsonRpcError`
(never an exception of another kind), so no input reaches the dispatcher malformed
and none can turn into a 500.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from rest_framework.utils.encoders import JSONEncoder

from affordances.encoding import MAX_DEPTH, fast_json, nesting_depth

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "JsonRpcError",
    "Message",
    "dumps",
    "error_response",
    "parse",
    "result_response",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's own codes: 2025-11-25 resources, and the 2026-07-28 transport.
RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId = str | int


class JsonRpcError(Exception):
    """A JSON-RPC error response; ``http_status`` overrides the revision's default."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        data: Any = None,
        http_status: int | None = None,
        id: RequestId | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        self.id = id

    def as_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass(frozen=True)
class Message:
    """One inbound message: a request (has ``id``), a notification, or a response."""

    method: str | None
    params: dict[str, Any] = field(default_factory=dict)
    id: RequestId | None = None
    kind: str = "request"  # "request" | "notification" | "response"

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python's json accepts them by default.
    raise ValueError(f"{name} is not valid JSON")


def _valid_id(value: Any) -> bool:
    # MCP: string or integer, never null (unlike bare JSON-RPC), never a float or bool.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse(body: bytes) -> Message:
    """Decode one JSON-RPC message; raise :class:`JsonRpcError` (-32700/-32600/-32602)."""
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise JsonRpcError(PARSE_ERROR, "Parse error: the body is not JSON.") from None
    if nesting_depth(data) > MAX_DEPTH:
        # Refused before anything walks the message (and recurses as deep as it nests).
        raise JsonRpcError(
            PARSE_ERROR, f"Parse error: the body nests deeper than {MAX_DEPTH} levels."
        )
    if isinstance(data, list):
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: batches are not supported; send one message."
        )
    if not isinstance(data, dict):
        raise JsonRpcError(INVALID_REQUEST, "Invalid Request: a message is a JSON object.")
    id_ = data.get("id")
    echo = id_ if _valid_id(id_) else None
    if data.get("jsonrpc") != "2.0":
        raise JsonRpcError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".', id=echo)
    if _has_lone_surrogate(data):
        # Legal JSON escapes ("\ud800") that are not Unicode: no database, URL or
        # response could carry them, so the message is refused as a whole.
        raise JsonRpcError(
            INVALID_REQUEST, "Invalid Request: strings must be valid Unicode.", id=echo
        )
    if "method" not in data and ("result" in data or "error" in data):
        if not _valid_id(id_):
            raise JsonRpcError(INVALID_REQUEST, "Invalid Request: a response needs an id.")
        return Message(method=None, id=id_, kind="response")
    method = data.get("method")
    if not isinstance(method, str) or not method:
        raise JsonRpcError(
            INVALID_REQUEST, 'Invalid Request: "method" must be a non-empty string.', id=echo
        )
    if "id" in data and not _valid_id(id_):
        raise JsonRpcError(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer.')
    params = data.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "params" must be an object.', id=echo)
    if "id" not in data:
        return Message(method=method, params=params, kind="notification")
    return Message(method=method, params=params, id=id_)


def result_response(id_: RequestId, result: dict[str, Any] | EncodedJson) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def error_response(id_: RequestId | None, error: JsonRpcError) -> dict[str, Any]:
    # JSON-RPC: the id is null when it could not be read from the request.
    return {"jsonrpc": "2.0", "id": id_, "error": error.as_dict()}


class EncodedJson(str):
    """JSON text encoded once: :func:`dumps` writes it into a message as it is."""


def dumps(data: Any) -> str:
    """Compact JSON, as DRF renders it (decimals, dates, lazy strings); an
    :class:`EncodedJson` value of the top-level object is written as it is."""
    if isinstance(data, dict) and any(isinstance(value, EncodedJson) for value in data.values()):
        members = (
            f"{_dumps(key)}:{value if isinstance(value, EncodedJson) else _dumps(value)}"
            for key, value in data.items()
        )
        return "{" + ",".join(members) + "}"
    return _dumps(data)


def _dumps(data: Any) -> str:
    encoded = fast_json(data)
    if encoded is not None:
        return encoded.decode()
    # What orjson refuses (a lone surrogate echoed back, say), ASCII-escaped: whatever
    # text a message carries, the answer is always encodable.
    return json.dumps(data, cls=JSONEncoder, separators=(",", ":"))


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    return False
