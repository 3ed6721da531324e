"""A resource representation in one of its three shapes: full, compact or plain.

- **full** (the default): affordance entries restate the catalog entry they come from
  (``operation`` URN, ``name``, ``title``, ``method``) besides what varies per object;
- **compact** (``?affordances=compact``): only what varies — the catalog entry is
  referenced by its ``name`` (the MCP tool name), then ``target``, ``arguments``,
  ``constraints`` (absent when nothing is narrowed) and ``validForVersion``;
  unavailable entries keep ``name`` and ``reason``;
- **plain** (``?affordances=none``): no affordance lists at all.

Execution stores the full representation (an idempotent replay answers "the stored
success"); each face answers it in its own shape, so a key first used on one face
replays on another exactly as that face answers (SPEC §6).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from affordances.problems import Problem

__all__ = ["AFFORDANCE_LISTS", "CATALOG_KEYS", "Shape", "compact_entry", "plain", "shaped"]

AFFORDANCE_LISTS = ("affordances", "unavailableAffordances")
# What an affordance entry restates from its catalog entry; compact entries leave it out.
CATALOG_KEYS = ("operation", "title", "method")


class Shape(StrEnum):
    FULL = "full"
    COMPACT = "compact"
    NONE = "none"

    @classmethod
    def from_param(cls, value: str | None) -> Shape:
        """``?affordances=`` → shape: absent is full, ``none`` or ``compact`` as asked;
        anything else is a ``validation_error`` (a typo must not pass for "full")."""
        if value is None:
            return cls.FULL
        if value == cls.NONE:
            return cls.NONE
        if value == cls.COMPACT:
            return cls.COMPACT
        raise Problem.validation({"affordances": ["Must be none or compact (or absent)."]})


def compact_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """One affordance (or unavailable) entry without what the catalog already says."""
    return {
        key: value
        for key, value in entry.items()
        if key not in CATALOG_KEYS and not (key == "constraints" and value == {})
    }


def plain(representation: Any) -> Any:
    """``representation`` without ``affordances``/``unavailableAffordances``, at any depth."""
    if isinstance(representation, dict):
        return {
            key: plain(value)
            for key, value in representation.items()
            if key not in AFFORDANCE_LISTS
        }
    if isinstance(representation, list):
        return [plain(item) for item in representation]
    return representation


def _compact(representation: Any) -> Any:
    if isinstance(representation, dict):
        return {
            key: (
                [compact_entry(entry) for entry in value]
                if key in AFFORDANCE_LISTS and isinstance(value, list)
                else _compact(value)
            )
            for key, value in representation.items()
        }
    if isinstance(representation, list):
        return [_compact(item) for item in representation]
    return representation


def shaped(representation: Any, shape: Shape) -> Any:
    """A full representation (a stored body, say) in ``shape``, at any depth."""
    if shape is Shape.NONE:
        return plain(representation)
    if shape is Shape.COMPACT:
        return _compact(representation)
    return representation
