"""What a preview answers: the run that would happen, without it happening.

``perform(..., preview=True)`` runs every check and the transition through the one
execution path, in a transaction that is then rolled back; this module writes its
answer (docs/protocol.md#previews). Nothing is kept — no audit record, no idempotency
claim, callbacks deferred with ``transaction.on_commit`` never fire — but side effects
the model's code does directly (an e-mail sent, an HTTP call) still happen: defer them
with ``on_commit``.
"""

from __future__ import annotations

from typing import Any

from affordances.operations import Operation

__all__ = ["PREVIEW_SCHEMA", "document"]


def document(
    operation: Operation,
    representation: dict[str, Any],
    *,
    source: Any,
    target: Any,
    version: int,
) -> dict[str, Any]:
    """The preview of ``operation``: the would-be representation, the state change (an
    edit's: none, the state it is in) and the version the preview holds for (send it
    back as ``expectedVersion`` to run it)."""
    fields = operation.resource.fsm_fields
    field = operation.facts.field if operation.is_transition else fields[0]
    return {
        "preview": True,
        "operation": operation.urn,
        "name": operation.name,
        "stateChange": {
            "field": field.name,
            "from": str(source),
            "to": str(target),
        },
        "validForVersion": version,
        "representation": representation,
    }


PREVIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "preview": {"type": "boolean", "const": True, "description": "Nothing was run or kept."},
        "operation": {"type": "string", "description": "The catalog entry's id."},
        "name": {"type": "string", "description": "The catalog entry's name."},
        "stateChange": {
            "type": "object",
            "description": "The state the run would leave the object in.",
            "properties": {
                "field": {"type": "string"},
                "from": {"type": "string"},
                "to": {"type": "string"},
            },
            "required": ["field", "from", "to"],
            "additionalProperties": False,
        },
        "validForVersion": {
            "type": "integer",
            "description": "The object's version the preview was computed at: send it "
            "back as expectedVersion (or If-Match) to run what was previewed.",
        },
        "representation": {
            "type": "object",
            "description": "The object as the run would leave it (its affordances "
            "included), as this face represents it.",
        },
    },
    "required": [
        "preview",
        "operation",
        "name",
        "stateChange",
        "validForVersion",
        "representation",
    ],
}
