"""JSON the same way everywhere: DRF's encoder, byte-stable where it is hashed.

What is served (rendered bodies, MCP messages) is written by orjson — a list of a
thousand resources with their affordances is a megabyte of JSON, and the standard
library's encoder took a tenth of the request writing it — with DRF's encoder for what
orjson does not know (decimals, lazy strings, dates and times, written exactly as DRF
writes them). What orjson refuses (a lone surrogate, an integer beyond 64 bits, a key
that is not a string, nesting past 255) falls back to the standard library, which
answers as before. One difference: orjson writes a non-finite float as ``null``, where
DRF's strict renderer fails the request.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from rest_framework.utils.encoders import JSONEncoder

__all__ = ["MAX_DEPTH", "canonical_json", "fast_json", "jsonable", "nesting_depth"]

_drf_default = JSONEncoder().default
# Dates and times go to DRF's encoder (it writes milliseconds and "Z"); dataclasses too
# (it refuses them, as the standard library path did).
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
# U+2028/U+2029 are valid JSON but end a line in JavaScript: escaped, as DRF does.
_JS_LINE_ENDS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def fast_json(data: Any) -> bytes | None:
    """Compact UTF-8 JSON of ``data``, or None when orjson refuses it (the caller falls
    back to the standard library)."""
    try:
        encoded = orjson.dumps(data, default=_drf_default, option=_ORJSON_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    if not encoded.isascii():  # one fast pass; most bodies are ASCII
        for raw, escaped in _JS_LINE_ENDS:
            if raw in encoded:
                encoded = encoded.replace(raw, escaped)
    return encoded


# Arrays and objects inside each other: no argument of any operation comes near it, and
# every parser of the app refuses more before anything walks the value recursively.
MAX_DEPTH = 32


def canonical_json(data: Any) -> str:
    """One byte-stable JSON text for hashing and golden files."""
    return json.dumps(data, cls=JSONEncoder, sort_keys=True, separators=(",", ":"))


def jsonable(data: Any) -> Any:
    """A plain JSON value, the same whether served now or replayed from a stored body."""
    encoded = fast_json(data)
    if encoded is None:
        return json.loads(json.dumps(data, cls=JSONEncoder))
    return orjson.loads(encoded)


def nesting_depth(value: Any, *, limit: int = MAX_DEPTH) -> int:
    """How deeply arrays and objects nest in ``value`` (a scalar is 0), counted without
    recursion; counting stops just past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        stack.extend((child, depth) for child in children)
    return deepest
