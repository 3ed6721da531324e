"""Opaque list cursors: an offset the client carries, so the server keeps no state.

The cursor names the list it belongs to, so one list's cursor is refused by another
(-32602, as the spec advises for invalid cursors) instead of silently paging it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError

__all__ = ["decode", "encode", "page"]

T = TypeVar("T")

_MAX_OFFSET = 10**9


def encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode().rstrip("=")


def decode(cursor: object, kind: str) -> int:
    """The offset a cursor stands for; 0 without one."""
    if cursor is None:
        return 0
    invalid = JsonRpcError(INVALID_PARAMS, "Invalid params: unknown or expired cursor.")
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise invalid
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid from None
    name, _, number = raw.partition(":")
    if name != kind or not number.isascii() or not number.isdigit():
        raise invalid
    offset = int(number)
    # Only the spelling ``encode`` writes: "tools:007", padding or other base64 variants
    # of the same offset are refused, so equal pages have one cursor (and one memo key).
    if offset > _MAX_OFFSET or encode(kind, offset) != cursor:
        raise invalid
    return offset


def page(items: Sequence[T], cursor: object, *, kind: str, size: int) -> tuple[list[T], str | None]:
    """One page of ``items`` and the cursor of the next, if any."""
    offset = decode(cursor, kind)
    chunk = list(items[offset : offset + size])
    following = offset + size
    return chunk, encode(kind, following) if following < len(items) else None
