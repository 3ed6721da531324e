"""A resource representation with or without its affordance lists.

Execution stores the full representation (an idempotent replay answers "the stored
success"); each face answers it in its own shape, so a key first used on one face
replays on another exactly as that face answers (SPEC §6).
"""

from __future__ import annotations

from typing import Any

__all__ = ["AFFORDANCE_LISTS", "plain"]

AFFORDANCE_LISTS = ("affordances", "unavailableAffordances")


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
