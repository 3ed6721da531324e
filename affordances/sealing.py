"""Sealed state: a value a client carries between two requests and cannot forge.

The MCP 2026-07-28 ``requestState`` of a confirmation travels through the client, which
the server must treat as an attacker. The state is signed with Django's signing
(HMAC-SHA256 over ``SECRET_KEY``, a salt per purpose, a timestamp) and checked for its
age when it comes back: a state altered by one byte, older than its lifetime or made for
another purpose is refused alike (:class:`Unsealed` is never told apart on the wire).
It is signed, not encrypted: it holds nothing the caller may not know (its own call's
arguments, the object's id and version, the operation) — docs/protocol.md#sealed-state.
"""

from __future__ import annotations

from typing import Any

from django.core import signing

__all__ = ["Unsealed", "seal", "unseal"]


class Unsealed(Exception):
    """A sealed value that was altered, expired, or sealed for another purpose."""


def seal(payload: dict[str, Any], *, purpose: str) -> str:
    """``payload`` (JSON) signed for ``purpose``, with the time it was sealed."""
    return signing.dumps(payload, salt=f"affordances:{purpose}", compress=True)


def unseal(token: Any, *, purpose: str, max_age: int) -> dict[str, Any]:
    """The payload of a value :func:`seal` made for ``purpose`` at most ``max_age``
    seconds ago; :class:`Unsealed` otherwise (whatever the reason)."""
    if not isinstance(token, str) or not token or len(token) > 16_384:
        raise Unsealed("not a sealed value")
    try:
        payload = signing.loads(token, salt=f"affordances:{purpose}", max_age=max_age)
    except (signing.BadSignature, ValueError, UnicodeDecodeError) as exc:
        # SignatureExpired is a BadSignature; a corrupt body may fail to decode.
        raise Unsealed(str(exc)) from None
    if not isinstance(payload, dict):
        raise Unsealed("not a sealed object")
    return payload
