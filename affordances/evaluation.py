"""Which operations apply to one object, for one caller, now — and why the others don't.

``evaluate`` is the single implementation of that rule: the serializer, the execution
path, the admin, MCP and HAL-FORMS all call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from affordances.declarations import DEFAULT_STATE_REASON, condition_reason
from affordances.operations import Operation
from affordances.schemas import assert_narrows

__all__ = [
    "Available",
    "Evaluation",
    "Unavailable",
    "constraints_for",
    "evaluate",
    "evaluate_permitted",
]


@dataclass(frozen=True)
class Available:
    operation: Operation
    constraints: dict[str, Any]


@dataclass(frozen=True)
class Unavailable:
    operation: Operation
    reason: str


Evaluation = Available | Unavailable | None


def evaluate(operation: Operation, instance: Any, user: Any) -> Evaluation:
    """Available (with constraints), Unavailable (one reason) or None (invisible).

    Invisible when the caller lacks the capability. Otherwise the first failing rule
    names the reason, in this order: the state, each condition, each guard.
    """
    if operation.is_create:
        # A collection operation: no object, no state; only capability and constraints.
        if not operation.permits(user):
            return None
        return Available(operation, constraints_for(operation, None, user))
    if not operation.is_transition or not operation.permits(user):
        return None
    return evaluate_permitted(operation, instance, user)


def evaluate_permitted(operation: Operation, instance: Any, user: Any) -> Evaluation:
    """:func:`evaluate` for a caller already known to hold the operation's capability.

    Lists check the capability once per request, not once per row.
    """
    assert operation.fsm_field is not None and operation.fsm_meta is not None
    if callable(operation.permission) and not operation.permission(instance, user):
        return None
    state = operation.fsm_field.get_state(instance)
    fsm_transition = operation.transition_for(state)
    spec = operation.spec
    if not operation.fsm_meta.has_transition(state) or fsm_transition is None:
        reason = spec.reasons.get(state, DEFAULT_STATE_REASON) if spec else DEFAULT_STATE_REASON
        return Unavailable(operation, reason)
    for check in fsm_transition.conditions:
        if not check(instance):
            return Unavailable(operation, condition_reason(check))
    for rule in spec.guards if spec else ():
        if not rule(instance, user):
            return Unavailable(operation, condition_reason(rule))
    return Available(operation, constraints_for(operation, instance, user))


def constraints_for(operation: Operation, instance: Any, user: Any) -> dict[str, Any]:
    """The operation's narrowing of its input schema for this object and caller."""
    spec = operation.spec
    if spec is None or spec.constraints is None:
        return {}
    constraints = dict(spec.constraints(instance, user) or {})
    # A constraint that widens would advertise arguments the catalog forbids:
    # refuse it loudly rather than let two schemas disagree.
    assert_narrows(operation.input_schema, constraints)
    return constraints
