"""What a person confirms before an operation that asks for it runs.

An operation opts in with ``@operation(confirm=True, consequence=...)`` (every transition
carries ``destructiveHint`` already, so that cannot be the trigger). The consequence is
the operator-facing sentence each face shows — the admin's confirmation page, the MCP
elicitation's message — written from the object as it is now (docs/protocol.md#confirmations).
"""

from __future__ import annotations

import logging
from typing import Any

from affordances.operations import Operation

__all__ = ["consequence_text", "state_change_text"]

logger = logging.getLogger(__name__)


def consequence_text(operation: Operation, instance: Any) -> str:
    """The sentence the person reads before ``operation`` runs on ``instance``.

    The declared text, or the one ``consequence(instance)`` writes; without one, the
    operation's title and the object. A callable that fails is the model's code failing:
    logged, and the generic sentence is shown instead (never a 500 for a confirmation).
    """
    declared = operation.spec.consequence if operation.spec is not None else None
    if isinstance(declared, str):
        return declared
    if declared is not None:
        try:
            text = declared(instance)
        except Exception:
            logger.exception(
                "the consequence of %s failed; the generic text is shown", operation.name
            )
        else:
            if isinstance(text, str) and text:
                return text
    verbose = operation.resource.model._meta.verbose_name
    return f"{operation.title}: {verbose} {instance.pk}. This cannot be undone."


def state_change_text(change: dict[str, Any] | None) -> str:
    """``"status: pending → cancelled"`` for a preview's state change."""
    if not change:
        return ""
    return f"{change['field']}: {change['from']} → {change['to']}"
