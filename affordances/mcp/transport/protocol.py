"""Protocol revisions: which one a request speaks, and how a result is dressed for it.

Two eras share the endpoint. The handshake era (2025-06-18, 2025-11-25) negotiates
once with ``initialize`` and then names the version in the ``MCP-Protocol-Version``
header. The 2026-07-28 revision has no handshake: every request carries the version,
client info and capabilities in ``params._meta`` and mirrors version, method and name
into headers. Either way the server keeps no state between requests — the revision is
read from each request alone, so any worker can answer any request.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from affordances.mcp.transport.jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonRpcError,
    Message,
)

__all__ = [
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "CacheHint",
    "Revision",
    "negotiate",
    "resolve",
]

MODERN_VERSIONS = ("2026-07-28",)
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18")
SUPPORTED_VERSIONS = (*MODERN_VERSIONS, *HANDSHAKE_VERSIONS)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[0]

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

# Which body field the Mcp-Name header mirrors, per method (2026-07-28).
_NAME_FIELDS = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}

# 2026-07-28 fixes the HTTP status of protocol errors; the handshake era leaves it open,
# and its clients (the TypeScript SDK among them) only read a JSON-RPC error from a 2xx,
# so there the errors of a well-formed request travel with 200.
_MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
_HANDSHAKE_STATUS = {PARSE_ERROR: 400, INVALID_REQUEST: 400, UNSUPPORTED_PROTOCOL_VERSION: 400}

_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


@dataclass(frozen=True)
class CacheHint:
    """2026-07-28 ``ttlMs``/``cacheScope`` of a list or read result."""

    ttl_ms: int
    scope: str  # "public" (same for every caller) or "private" (per authorization)


@dataclass(frozen=True)
class Revision:
    version: str

    @property
    def modern(self) -> bool:
        return self.version in MODERN_VERSIONS

    def status_for(self, error: JsonRpcError) -> int:
        if error.http_status is not None:
            return error.http_status
        table = _MODERN_STATUS if self.modern else _HANDSHAKE_STATUS
        return table.get(error.code, 200)

    def dress(
        self,
        result: dict[str, Any],
        *,
        server_info: dict[str, Any],
        cache: CacheHint | None = None,
    ) -> dict[str, Any]:
        """Add what this revision requires of every result; earlier ones get none of it."""
        if not self.modern:
            return result
        dressed = {"resultType": "complete", **result}
        if cache is not None:
            dressed["ttlMs"] = cache.ttl_ms
            dressed["cacheScope"] = cache.scope
        meta = dict(dressed.get("_meta") or {})
        meta.setdefault(SERVER_INFO_KEY, server_info)
        dressed["_meta"] = meta
        return dressed


def negotiate(requested: Any) -> str:
    """``initialize``: the client's version if we speak it, else our latest (spec)."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE


def unsupported(requested: str) -> JsonRpcError:
    return JsonRpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        data={"supported": list(SUPPORTED_VERSIONS), "requested": requested},
        http_status=400,
    )


def decode_header_value(value: str | None) -> str | None:
    """Undo the ``=?base64?…?=`` sentinel of Mcp-Name; a corrupt one matches nothing."""
    if value is None:
        return None
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group("payload"), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def resolve(message: Message, headers: Mapping[str, str]) -> Revision:
    """The revision a (non-``initialize``) request speaks, its envelope checked.

    Raises the error the spec prescribes: a missing version header (400), an unknown
    version (-32022), and for 2026-07-28 a malformed ``_meta`` (-32602) or headers that
    disagree with the body (-32020).
    """
    header = headers.get(VERSION_HEADER)
    if header is None:
        if PROTOCOL_VERSION_KEY in message.meta:
            raise JsonRpcError(
                HEADER_MISMATCH,
                f"Header mismatch: the {VERSION_HEADER} header is missing.",
                http_status=400,
            )
        raise JsonRpcError(
            INVALID_REQUEST,
            f"Invalid Request: send the {VERSION_HEADER} header with the version that "
            "initialize negotiated, or use server/discover.",
            data={"supported": list(SUPPORTED_VERSIONS)},
            http_status=400,
        )
    if header in HANDSHAKE_VERSIONS:
        return Revision(header)
    if header in MODERN_VERSIONS:
        _check_modern_envelope(message, headers, header)
        return Revision(header)
    raise unsupported(header)


def _check_modern_envelope(message: Message, headers: Mapping[str, str], header: str) -> None:
    # The order of the SDK's inbound ladder: envelope shape, then header agreement.
    meta = message.params.get("_meta")
    if not isinstance(meta, dict) or not {PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY} <= set(
        meta
    ):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"Invalid params: params._meta must carry {PROTOCOL_VERSION_KEY!r} and "
            f"{CLIENT_CAPABILITIES_KEY!r}.",
            http_status=400,
        )
    if meta[PROTOCOL_VERSION_KEY] != header:
        raise JsonRpcError(
            HEADER_MISMATCH,
            f"Header mismatch: {VERSION_HEADER} differs from the body's protocol version.",
            http_status=400,
        )
    if headers.get(METHOD_HEADER) != message.method:
        raise JsonRpcError(
            HEADER_MISMATCH,
            f"Header mismatch: {METHOD_HEADER} is missing or differs from the body's method.",
            http_status=400,
        )
    name_field = _NAME_FIELDS.get(message.method or "")
    named = message.params.get(name_field) if name_field is not None else None
    if named is not None and decode_header_value(headers.get(NAME_HEADER)) != named:
        raise JsonRpcError(
            HEADER_MISMATCH,
            f"Header mismatch: {NAME_HEADER} is missing or differs from params.{name_field}.",
            http_status=400,
        )
