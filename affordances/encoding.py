"""JSON the same way everywhere: DRF's encoder, byte-stable where it is hashed."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.utils.encoders import JSONEncoder

__all__ = ["MAX_DEPTH", "canonical_json", "jsonable", "nesting_depth"]

# Arrays and objects inside each other: no argument of any operation comes near it, and
# every parser of the app refuses more before anything walks the value recursively.
MAX_DEPTH = 32


def canonical_json(data: Any) -> str:
    """One byte-stable JSON text for hashing and golden files."""
    return json.dumps(data, cls=JSONEncoder, sort_keys=True, separators=(",", ":"))


def jsonable(data: Any) -> Any:
    """A plain JSON value, the same whether served now or replayed from a stored body."""
    return json.loads(json.dumps(data, cls=JSONEncoder))


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
