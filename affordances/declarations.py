"""Metadata declared next to a django-fsm transition.

django-fsm already knows an operation's sources, targets, conditions and permission.
What it does not know — a title, the input serializer, why the operation is refused in
a given state, per-user guards, argument constraints — is declared here, in one place,
and stored in the transition's own ``custom`` dict under the ``"affordances"`` key so
that django-fsm's admin keys (``label``, ``form``…) never collide with ours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings as django_settings

from affordances.compat.fsm import transition_meta
from affordances.conf import prerequisites

if TYPE_CHECKING:
    from rest_framework import serializers

__all__ = [
    "CUSTOM_KEY",
    "DEFAULT_CONDITION_REASON",
    "DEFAULT_STATE_REASON",
    "MISCONFIGURED_REASON",
    "OperationSpec",
    "condition",
    "condition_reason",
    "creates",
    "guard",
    "misplaced",
    "operation",
]

CUSTOM_KEY = "affordances"
CREATE_ATTRIBUTE = "affordances_create"
# Where @operation leaves its spec on a method that is no transition when it is applied:
# below @transition, or on a plain method (the system check affordances.E047).
MISPLACED_ATTRIBUTE = "affordances_misplaced"
# The core's own reasons; every other reason is declared next to its transition.
DEFAULT_STATE_REASON = "invalid_state"
DEFAULT_CONDITION_REASON = "condition_not_met"
# The operation's declaration is broken (a constraint that widens): refused, logged.
MISCONFIGURED_REASON = "misconfigured"

Guard = Callable[[Any, Any], bool]
Constraints = Callable[[Any, Any], Mapping[str, Any]]
# What a confirmation tells the person: a sentence, or one written from the object.
Consequence = str | Callable[[Any], str]


@dataclass(frozen=True)
class OperationSpec:
    """What an operation adds to its django-fsm transition."""

    title: str
    input: type[serializers.Serializer[Any]] | None = None
    name: str | None = None
    version: int = 1
    reasons: Mapping[Any, str] = field(default_factory=dict)
    guards: Sequence[Guard] = ()
    constraints: Constraints | None = None
    annotations: Mapping[str, bool] = field(default_factory=dict)
    enabled_by: str | None = None
    # Explicit opt-in (every transition is destructiveHint already): the faces ask the
    # person before it runs (affordances.confirmation).
    confirm: bool = False
    consequence: Consequence | None = None
    # Model-level permissions the caller must hold before any object is involved (a
    # role): with an object backend, the catalog and tools/list then differ by role.
    requires: tuple[str, ...] = ()

    def enabled(self) -> bool:
        """Whether the operation joins the catalog: always, or while its setting is truthy."""
        return self.enabled_by is None or bool(getattr(django_settings, self.enabled_by, False))


def operation(
    *,
    title: str,
    input: type[serializers.Serializer[Any]] | None = None,
    name: str | None = None,
    version: int = 1,
    reasons: Mapping[Any, str] | None = None,
    guards: Sequence[Guard] = (),
    constraints: Constraints | None = None,
    annotations: Mapping[str, bool] | None = None,
    enabled_by: str | None = None,
    confirm: bool = False,
    consequence: Consequence | None = None,
    requires: str | Sequence[str] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a transition as an operation. Apply it above ``@transition``.

    ``reasons`` maps a state the operation cannot start from to a machine reason;
    ``guards`` are ``(instance, user) -> bool`` rules made with :func:`guard`;
    ``constraints`` is ``(instance, user) -> JSON Schema`` that may only narrow the
    input schema. ``enabled_by`` names a Django setting: the operation exists (catalog,
    tools, affordances, execution) only while that setting is truthy. ``confirm``: the
    faces ask the person before the operation runs, telling them ``consequence`` (a
    sentence, or ``(instance) -> str``; docs/protocol.md#confirmations). ``requires``: a
    permission (``"app_label.codename"``) or several that the caller must hold without
    an object — a role's prerequisite — before the operation's own permission is asked
    of any object (docs/howto/roles-permissions.md#role-prerequisites).
    """
    if consequence is not None and not confirm:
        raise TypeError("consequence= is the text of a confirmation: give confirm=True too.")
    required = prerequisites(requires if isinstance(requires, str) else tuple(requires))
    if required is None:
        raise TypeError(
            "requires= takes permission names 'app_label.codename' (one, or a sequence)."
        )
    spec = OperationSpec(
        title=title,
        input=input,
        name=name,
        version=version,
        reasons=dict(reasons or {}),
        guards=tuple(guards),
        constraints=constraints,
        annotations=dict(annotations or {}),
        enabled_by=enabled_by,
        confirm=bool(confirm),
        consequence=consequence,
        requires=required,
    )

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        meta = transition_meta(method)
        if meta is None:
            # Not raised: this runs while the models are imported, before any system
            # check could say what is wrong; the check reads the mark (misplaced()).
            setattr(method, MISPLACED_ATTRIBUTE, spec)
            return method
        # One Transition per source state; when `custom` was not given each has its own
        # dict, so every one of them gets the spec.
        for fsm_transition in meta.transitions.values():
            fsm_transition.custom[CUSTOM_KEY] = spec
        return method

    return decorate


@dataclass(frozen=True)
class CreateSpec:
    """A collection operation: a model callable that makes a new object."""

    spec: OperationSpec
    permission: str | None = None


def creates(
    *,
    title: str,
    input: type[serializers.Serializer[Any]] | None = None,
    permission: str | None = None,
    name: str | None = None,
    version: int = 1,
    constraints: Constraints | None = None,
    annotations: Mapping[str, bool] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a model function ``(cls, *, user, **arguments) -> instance`` as ``create_*``.

    Apply it under ``@classmethod``. ``constraints`` gets ``(None, user)``.
    """
    spec = CreateSpec(
        spec=OperationSpec(
            title=title,
            input=input,
            name=name,
            version=version,
            constraints=constraints,
            annotations=dict(annotations or {}),
        ),
        permission=permission,
    )

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, CREATE_ATTRIBUTE, spec)
        return func

    return decorate


def misplaced(method: Any) -> str | None:
    """Why ``@operation`` did not declare ``method`` (a model's attribute), or None: it was
    applied below ``@transition`` (``@transition`` wraps the method it was given, the
    mark included), or to a method that is no transition at all."""
    # Its own __dict__ only (the mark and what @transition's functools.wraps copied), so
    # no attribute of an arbitrary class member is computed.
    spec = getattr(method, "__dict__", {}).get(MISPLACED_ATTRIBUTE)
    if not isinstance(spec, OperationSpec):
        return None
    if transition_meta(method) is not None:
        return "@operation must be above @transition"
    return "@operation must decorate a django-fsm @transition"


def condition(reason: str) -> Callable[[Callable[[Any], bool]], Callable[[Any], bool]]:
    """Give a django-fsm condition the machine reason reported when it fails."""

    def decorate(func: Callable[[Any], bool]) -> Callable[[Any], bool]:
        func.affordances_reason = reason  # type: ignore[attr-defined]
        return func

    return decorate


def guard(reason: str) -> Callable[[Guard], Guard]:
    """Mark an ``(instance, user) -> bool`` rule as a guard with its machine reason."""

    def decorate(func: Guard) -> Guard:
        func.affordances_reason = reason  # type: ignore[attr-defined]
        return func

    return decorate


def condition_reason(func: Callable[..., Any]) -> str:
    """The reason a condition or guard declared, or a generic one."""
    return getattr(func, "affordances_reason", DEFAULT_CONDITION_REASON)
