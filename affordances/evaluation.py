"""Which operations apply to one object, for one caller, now — and why the others don't.

``evaluate`` is the single implementation of that rule: the serializer, the execution
path, the admin, MCP and HAL-FORMS all call it.

Permissions are django-fsm's (see :mod:`affordances.operations`): a transition shows on
an object when the caller holds one of the method's transitions on it, and is available
only when ``django_fsm.has_transition_perm`` and ``can_proceed`` say yes (and the
guards): the transition of the object's state, its permission on this object, its
conditions.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import orjson
from django_fsm import FSMFieldMixin, Transition

from affordances.caches import Cache
from affordances.constraints import ConstraintWidens, assert_narrows
from affordances.declarations import DEFAULT_STATE_REASON, MISCONFIGURED_REASON, condition_reason
from affordances.edits import editable_now, narrowing
from affordances.frozen import FrozenDict
from affordances.object_permissions import Ask
from affordances.operations import Holding, Operation

__all__ = [
    "Available",
    "Checked",
    "Constraints",
    "Evaluation",
    "InState",
    "Unavailable",
    "constraints_for",
    "evaluate",
    "evaluate_edit",
    "evaluate_in_state",
    "evaluate_permitted",
    "overrides_get_state",
    "read_state",
    "refused_by_state",
    "spelling",
]


# Slots: one is made per evaluated operation and row, and a slotted one is one object,
# not two (no __dict__).
@dataclass(frozen=True, slots=True)
class Available:
    operation: Operation
    constraints: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Unavailable:
    operation: Operation
    reason: str


Evaluation = Available | Unavailable | None

logger = logging.getLogger(__name__)


def evaluate(operation: Operation, instance: Any, user: Any) -> Evaluation:
    """Available (with constraints), Unavailable (one reason) or None (invisible).

    Invisible when the caller lacks the capability. Otherwise the first failing rule
    names the reason, in this order: the state, each condition, each guard.
    """
    if operation.is_create:
        # A collection operation: no object, no state; only capability and constraints.
        if not operation.permits(user):
            return None
        return _constrained(operation, None, user)
    if operation.is_edit:
        return evaluate_edit(operation, instance, user)
    if not operation.is_transition:
        return None
    holding = operation.holding(user)
    if not holding.anywhere:
        return None
    return evaluate_permitted(operation, instance, user, holding=holding)


def evaluate_edit(
    operation: Operation,
    instance: Any,
    user: Any,
    *,
    holding: Holding | None = None,
    held: Ask | None = None,
) -> Evaluation:
    """An edit (``edit_{resource}``, :mod:`affordances.edits`) on one object, from the one
    answer of which fields the caller may change there now
    (:func:`affordances.edits.editable_now`): invisible without it; refused as a state
    is (``invalid_state``) where the state leaves none; else available, its constraints
    ruling out the declared fields the state does not leave (``false``).
    ``holding``: what the caller holds without an object, if worked out already;
    ``held``: a page's answers on its objects (:meth:`Holding.on`)."""
    editable = editable_now(operation, instance, user, holding=holding, held=held)
    if editable is None:
        return None
    if not editable:
        return Unavailable(operation, DEFAULT_STATE_REASON)
    return Available(operation, narrowing(operation.resource, editable))


def evaluate_permitted(
    operation: Operation, instance: Any, user: Any, *, holding: Holding | None = None
) -> Evaluation:
    """:func:`evaluate` with what the caller holds without an object (``holding``, from
    :meth:`Operation.holding`) worked out already: lists do it once per request, not
    once per row."""
    state = read_state(operation.facts.field, instance)
    return evaluate_in_state(operation, instance, user, state, holding=holding)


def evaluate_in_state(
    operation: Operation,
    instance: Any,
    user: Any,
    state: Any,
    *,
    holding: Holding | None = None,
    checked: Checked | None = None,
) -> Evaluation:
    """:func:`evaluate_permitted` with the object's ``state`` already read (a list reads it
    once per row for all the operations on its field).

    None when the caller holds none of the operation's transitions on this object; the
    state's refusal when no transition leaves ``state`` — or when the caller may run the
    method from another state only (it holds another source's permission, not this
    one's); then each condition, each guard. ``checked``: the constraints checked already
    in this request (:func:`constraints_for`)."""
    if holding is None:
        holding = operation.holding(user)
    return InState(operation, state, holding).evaluate(instance, user, checked)


class InState:
    """One operation for the objects of one state and one caller: what the state and what
    the caller holds without an object decide, worked out once (a list does it once per
    state and request); :meth:`evaluate` asks each object the rest — the object-level
    permissions, the conditions, the guards, the constraints."""

    __slots__ = (
        "conditions",
        "guards",
        "held",
        "holding",
        "operation",
        "refusal",
        "state",
        "transition",
        "unconstrained",
    )

    def __init__(self, operation: Operation, state: Any, holding: Holding) -> None:
        self.operation = operation
        self.state = state
        self.holding = holding
        self.transition, self.refusal = _in_state(operation, state)
        # Held model-wide: shown and permitted on every object without asking it (most
        # operations of most callers).
        self.held = self.transition is not None and bool(
            holding.answers.get(self.transition.permission or None)
        )
        self.conditions = tuple(self.transition.conditions) if self.transition else ()
        spec = operation.spec
        self.guards = tuple(spec.guards) if spec else ()
        # An operation without constraints is available alike on every object that passes
        # its conditions and guards: one answer for all of them (read-only, as a list's
        # entries are; evaluate() shares it only when given a request's ``checked``).
        unconstrained = spec is None or spec.constraints is None
        self.unconstrained = Available(operation, _NONE) if unconstrained else None

    def evaluate(
        self, instance: Any, user: Any, checked: Checked | None = None, held: Ask | None = None
    ) -> Evaluation:
        """:func:`evaluate_in_state` for an object in this state. ``held``: how objects are
        asked for permissions (a page's :class:`~affordances.object_permissions.PageAnswers`,
        which asks each once per page), if not for this object alone."""
        operation = self.operation
        if not self.held:
            shown, permitted = self.holding.on(instance, user, self.transition, held)
            if not shown:
                return None
            if self.refusal is not None:
                return self.refusal
            if not permitted:
                return _state_refusal(operation, self.state)
        for check in self.conditions:
            if not check(instance):
                return Unavailable(operation, condition_reason(check))
        for rule in self.guards:
            if not rule(instance, user):
                return Unavailable(operation, condition_reason(rule))
        if self.unconstrained is not None and checked is not None:
            return self.unconstrained
        return _constrained(operation, instance, user, checked)


def overrides_get_state(field: FSMFieldMixin) -> bool:
    """Whether ``field`` reads its state its own way (not django-fsm's descriptor)."""
    return type(field).get_state is not FSMFieldMixin.get_state


def read_state(field: FSMFieldMixin, instance: Any) -> Any:
    """``field.get_state(instance)``, without the descriptor django-fsm builds on each call
    when the value is loaded already (a list reads a state on every row); a deferred
    state, or a field with its own ``get_state``, is django-fsm's."""
    if not overrides_get_state(field):
        try:
            return instance.__dict__[field.attname]
        except KeyError:
            pass
    return field.get_state(instance)


def refused_by_state(operation: Operation, state: Any, holding: Holding) -> Unavailable | None:
    """What :func:`evaluate_in_state` answers for every object in ``state`` when the state
    alone decides it, for a caller holding ``holding``: the refusal of a state the
    operation does not leave. None when the object decides — the state allows it, or
    whether the caller sees the operation at all depends on the object (an object-level
    permission comes first)."""
    if not holding.everywhere:
        return None
    return _in_state(operation, state)[1]


# What the state alone decides, per operation and state: it depends on the declarations
# only, so it is worked out once per process, not once per row (the catalog's operations
# are rebuilt when the settings change, and so are the keys here). Bound: 4,096 entries
# of a key and two small objects each (about 0.2 kB), under 1 MiB per process.
_STATE_OUTCOMES: Cache[tuple[Operation, Any], tuple[Transition | None, Unavailable | None]] = Cache(
    "state outcomes", keys="operation, state value", max_entries=4096
)


def _in_state(operation: Operation, state: Any) -> tuple[Transition | None, Unavailable | None]:
    def decide() -> tuple[Transition | None, Unavailable | None]:
        facts = operation.facts
        fsm_transition = facts.transition_for(state)
        if facts.meta.has_transition(state) and fsm_transition is not None:
            return (fsm_transition, None)
        return (None, _state_refusal(operation, state))

    return _STATE_OUTCOMES.get((operation, state), decide)


def _state_refusal(operation: Operation, state: Any) -> Unavailable:
    spec = operation.spec
    reason = spec.reasons.get(state, DEFAULT_STATE_REASON) if spec else DEFAULT_STATE_REASON
    return Unavailable(operation, reason)


def _constrained(
    operation: Operation, instance: Any, user: Any, checked: Checked | None = None
) -> Available | Unavailable:
    try:
        return Available(operation, constraints_for(operation, instance, user, checked))
    except ConstraintWidens:
        # A declaration bug (the system check probes for it): fail closed — offering the
        # unnarrowed schema would let through what the policy refuses — and say so in
        # the log, never as a 500.
        logger.exception("The constraints of %s widen its input schema", operation.name)
        return Unavailable(operation, MISCONFIGURED_REASON)


class Constraints(FrozenDict):
    """An operation's narrowing for one object as a request keeps it: read-only (the rows
    it applies to share it) and known by ``key``, its exact spelling (JSON's 1, 1.0, true
    and "1" stay apart), or None past the spellings a request keeps: what a face that
    works out something per constraint (a HAL-FORMS form) keys it by."""

    __slots__ = ("key",)

    def __init__(self, values: Mapping[str, Any], key: bytes | str | None) -> None:
        super().__init__(values)
        self.key = key


# No narrowing, as every object of an operation without constraints shares it.
_NONE = Constraints({}, b"")

# Constraints found to narrow during one request, per operation, by their exact spelling:
# the rows of a page mostly share a few, and each is checked — and kept — once.
Checked = dict[Operation, dict[bytes | str, Constraints]]
# Distinct constraints kept per operation and request: a rule that narrows each row its
# own way (a bound from the row's amount) is checked row by row past it, and holds no
# more memory than this.
_CHECKED_MAX = 64


# orjson's own types only (a str or int subclass, a date or a dataclass makes it fail:
# then repr); it writes NaN and the infinities as null, so a null means repr too.
_SPELLING = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)


def spelling(declared: Mapping[str, Any]) -> bytes | str:
    """A key that tells apart what JSON tells apart (1, 1.0, true, "1"): orjson's
    writing, six times faster than repr on a few enum values; repr where orjson refuses
    or writes null."""
    if not declared:
        return b""
    try:
        spelled = orjson.dumps(declared, option=_SPELLING)
    except TypeError:  # orjson.JSONEncodeError is one
        return repr(declared)
    return repr(declared) if b"null" in spelled else spelled


def constraints_for(
    operation: Operation, instance: Any, user: Any, checked: Checked | None = None
) -> dict[str, Any]:
    """The operation's narrowing of its input schema for this object and caller.

    With ``checked`` (one request's, :class:`affordances.entries.AffordanceLists`), a
    constraint spelled like one checked already is that one: the same
    :class:`Constraints`, read-only, shared by the rows it applies to."""
    spec = operation.spec
    rule = spec.constraints if spec is not None else None
    if rule is None and checked is None:
        return {}
    declared = (rule(instance, user) if rule is not None else None) or {}
    seen = None
    if checked is not None:
        seen = checked.get(operation)
        if seen is None:
            seen = checked[operation] = {}
    key = spelling(declared) if seen is not None and len(seen) < _CHECKED_MAX else None
    if key is not None and seen is not None:
        known = seen.get(key)
        # Spelled alike and equal: the same JSON, and no enum member, UUID or tuple
        # standing for its value, its text or a list (orjson writes them alike).
        if known is not None and known == declared:
            return known
    # Known by its spelling unless another (unequal) object is already known by it.
    kept = key if key is not None and seen is not None and key not in seen else None
    constraints: dict[str, Any] = dict(declared) if seen is None else Constraints(declared, kept)
    # A constraint that widens would advertise arguments the catalog forbids:
    # refuse it loudly rather than let two schemas disagree.
    assert_narrows(operation.input_schema, constraints)
    if kept is not None and seen is not None:
        seen[kept] = cast(Constraints, constraints)
    return constraints
