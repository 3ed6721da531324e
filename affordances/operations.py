"""One ``Operation`` per django-fsm transition (and per read) of a registered model.

Everything django-fsm knows is read from its own objects — ``field.transitions``,
each wrapper's ``_django_fsm`` meta and its ``Transition`` objects — never restated.

Permissions are django-fsm's (``Transition.has_perm``, which ``has_transition_perm``
asks for the transition of the object's state): no permission, a callable
``permission(instance, user)``, or a string that the caller holds on the object —
``user.has_perm(perm, instance)``, what an object-permission backend such as
django-rules or django-guardian answers — or without one, ``user.has_perm(perm)``.
A method may carry several ``@transition`` decorators, one ``Transition`` per source,
each with its own permission: every one of them counts. The rule is split in two.

Without an object (:meth:`Operation.holding`, once per caller and request) each
permission is held on every object (no permission; ``user.has_perm(perm)`` — for
django-fsm that grants every object), on none, or the object decides (a callable; a
string not held model-wide while a backend that answers per object is configured).
How the backends answer ``has_perm(perm)`` without an object is why no other answer is
possible: ``ModelBackend`` answers for the model, and ignores objects; django-guardian
answers False whatever the user holds on objects (its backend supports objects only);
django-rules calls the predicate with ``obj=None`` — and a predicate used with
django-fsm must answer False there (else django-fsm grants every object) and must
accept None at all (django-fsm asks without an object whenever the object says no).
So a permission held on some objects only looks, without an object, exactly like one
held on none, and telling them apart means asking every object. The catalog (the
capability filter, :meth:`Operation.permits`) therefore lists an operation when one of
its transitions' permissions is held model-wide or may be granted per object — a
callable, or a string while an object-permission backend is configured; with Django's
``ModelBackend`` alone, exactly the model-level permissions, as before.

Per object (:mod:`affordances.evaluation`) the answer is django-fsm's exactly: the
operation shows on an object when the caller holds one of its transitions there, and
is available only if it holds the transition of the object's state. An object is asked
only when the answer without one did not decide: a caller holding a permission
model-wide costs no per-row check, so a list of N objects costs the same queries. What
is left is asked once per permission and object of a page, a batching backend's (such
as django-guardian's) for the whole page at once (:mod:`affordances.object_permissions`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any

from django.contrib.auth import get_backends
from django.contrib.auth.backends import BaseBackend, ModelBackend
from django_fsm import FSMFieldMixin, FSMMeta, Transition
from rest_framework import serializers

from affordances import capabilities, edits, registry
from affordances.compat.fsm import transition_meta
from affordances.conf import settings
from affordances.declarations import CREATE_ATTRIBUTE, CUSTOM_KEY, CreateSpec, OperationSpec
from affordances.object_permissions import Ask, PageAnswers
from affordances.resources import Resource
from affordances.schemas import filter_schema, nullable, serializer_schema
from affordances.shapes import Shape, list_schemas
from affordances.vocabulary import DIALECT, version_schema

__all__ = [
    "ACTOR_PARAMETER",
    "Holding",
    "Kind",
    "Known",
    "Operation",
    "TransitionFacts",
    "build_operations",
    "object_permissions_configured",
    "transition_method_names",
]


class Kind(StrEnum):
    """What an operation does: read objects, move one through its FSM, make one, or
    change plain fields of one (``edit_{resource}``, :mod:`affordances.edits`)."""

    READ = "read"
    TRANSITION = "transition"
    CREATE = "create"
    EDIT = "edit"


# The transition method's keyword for who performs it (django-fsm-log's convention).
ACTOR_PARAMETER = "by"

_TRANSITION_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": False,
}
# An edit overwrites values (destructive); sent again, the same values change nothing.
_EDIT_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": True,
    "openWorldHint": False,
}
_READ_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


# django-fsm's permission: none, a string, or a callable ``(instance, user) -> bool``.
Permission = str | Callable[[Any, Any], bool] | None


def _answers_per_object(backend: Any) -> bool:
    """Whether ``backend.has_perm(user, perm, obj)`` may say yes for an object.

    django-guardian says so (``supports_object_permissions = True``); a backend may say
    no the same way. Django's ``ModelBackend`` and ``BaseBackend`` ignore objects unless
    a subclass overrides how permissions are answered; any other backend with
    ``has_perm`` (django-rules' has no base class) is taken to answer per object.
    """
    declared = getattr(backend, "supports_object_permissions", None)
    if declared is not None:
        return bool(declared)
    if not callable(getattr(backend, "has_perm", None)):
        return False  # Django asks it no permission
    base = ModelBackend if isinstance(backend, ModelBackend) else BaseBackend
    if not isinstance(backend, base):
        return True
    return any(
        getattr(type(backend), name, None) is not getattr(base, name, None)
        for name in capabilities.PERMISSION_METHODS
    )


_object_backends: bool | None = None


def object_permissions_configured() -> bool:
    """Whether some configured authentication backend answers permissions per object
    (worked out once per ``AUTHENTICATION_BACKENDS``)."""
    global _object_backends
    if _object_backends is None:
        _object_backends = any(_answers_per_object(backend) for backend in get_backends())
    return _object_backends


@registry.derived
def _forget_backends() -> None:
    # Worked out from AUTHENTICATION_BACKENDS.
    global _object_backends
    _object_backends = None


@dataclass(frozen=True)
class Holding:
    """What one caller holds of one operation before any object is read.

    ``answers`` maps each permission of the operation (None: none) to True — held on
    every object —, False — held on none — or None — the object decides.
    """

    answers: Mapping[Permission, bool | None]
    #: The catalog's rule: some permission is held on some object, or may be.
    anywhere: bool
    #: Shown on every object without asking it: some permission is held model-wide.
    everywhere: bool

    @classmethod
    def of(cls, answers: Mapping[Permission, bool | None]) -> Holding:
        values = answers.values()
        return cls(
            answers=answers,
            anywhere=any(answer is not False for answer in values),
            everywhere=any(answer is True for answer in values),
        )

    def on(
        self,
        instance: Any,
        user: Any,
        fsm_transition: Transition | None,
        held: Ask | None = None,
    ) -> tuple[bool, bool]:
        """``(shown, permitted)`` on ``instance``: whether the caller holds one of the
        operation's transitions there, and whether it holds ``fsm_transition`` (the one
        that leaves the object's state; None: none does) — each as django-fsm's
        ``Transition.has_perm(instance, user)`` answers. Objects are asked only where
        the answer without one did not decide, each permission once: through ``held``,
        a page's :meth:`~affordances.object_permissions.PageAnswers.held` (which keeps
        each answer for the page), else through one made for this object."""
        answers = self.answers
        if fsm_transition is not None:
            answer = answers.get(fsm_transition.permission or None)
            if answer:
                return True, True  # held model-wide: most rows of most callers
            if answer is None:  # the object decides
                if held is None:
                    held = PageAnswers(user, (instance,)).held
                if held(fsm_transition.permission, instance):
                    return True, True
        if self.everywhere:
            return True, False
        for permission, answer in answers.items():
            if answer is None:
                if held is None:
                    held = PageAnswers(user, (instance,)).held
                answer = held(permission, instance)
            if answer:
                return True, False
        return False, False


_HOLDS_NOTHING = Holding.of({})
_UNASKED = object()

# One user's answers without an object, per permission and whether an object may still
# decide (Operation.holding's ``known``).
Known = dict[tuple[Permission, bool], bool | None]


def _held_without_object(permission: Permission, user: Any, *, per_object: bool) -> bool | None:
    if not permission:
        return True
    if callable(permission):
        return None
    if user.has_perm(permission):
        return True
    return None if per_object and object_permissions_configured() else False


@dataclass(frozen=True)
class TransitionFacts:
    """What django-fsm knows of one transition, read from its own objects."""

    field: FSMFieldMixin
    meta: FSMMeta
    sources: tuple[str, ...]
    targets: tuple[str, ...]

    def transition_for(self, state: Any) -> Transition | None:
        return self.meta.get_transition(state)


@dataclass(frozen=True, eq=False)
class Operation:
    """A stable verb: identity, prose, schemas and, for transitions, the FSM facts."""

    name: str
    version: int
    title: str
    description: str
    resource: Resource
    kind: Kind
    http_method: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    annotations: dict[str, bool]
    # A create operation's permission, an edit's (Django's change permission); a
    # transition's are its django-fsm Transitions'.
    permission: str | None = None
    # The model attribute that runs it: the transition method, or the creating classmethod.
    method_name: str | None = None
    spec: OperationSpec | None = None
    transition: TransitionFacts | None = None

    @property
    def input_serializer(self) -> type[serializers.Serializer[Any]] | None:
        return self.spec.input if self.spec is not None else None

    @cached_property
    def actor_parameter(self) -> str | None:
        """``"by"`` when the transition method takes a ``by`` keyword: django-fsm-log's
        convention for who performs a transition, and this library's. Every face then
        passes the acting user as ``by=``; it is never an argument a caller sends."""
        if self.transition is None or self.method_name is None:
            return None
        method = getattr(self.resource.model, self.method_name, None)
        if method is None:
            return None
        try:
            parameters = inspect.signature(inspect.unwrap(method)).parameters
        except (TypeError, ValueError):  # a builtin or a callable without a signature
            return None
        parameter = parameters.get(ACTOR_PARAMETER)
        keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return ACTOR_PARAMETER if parameter is not None and parameter.kind in keyword else None

    @cached_property
    def urn(self) -> str:
        slug = self.name.replace("_", "-")
        return f"urn:{settings.NAMESPACE}:operation:{slug}:v{self.version}"

    @property
    def confirmation_required(self) -> bool:
        """Whether the faces ask the person before it runs: ``@operation(confirm=True)``,
        unless ``AFFORDANCES["CONFIRMATIONS"]`` is off (no person to ask). The one rule the
        catalog, the affordance entries, MCP and the admin read."""
        return self.spec is not None and self.spec.confirm and settings.CONFIRMATIONS

    @property
    def is_transition(self) -> bool:
        return self.kind is Kind.TRANSITION

    @property
    def is_create(self) -> bool:
        return self.kind is Kind.CREATE

    @property
    def is_edit(self) -> bool:
        return self.kind is Kind.EDIT

    @property
    def facts(self) -> TransitionFacts:
        """The FSM facts of a transition (a programming error to ask of another kind)."""
        if self.transition is None:
            raise TypeError(f"{self.name} is a {self.kind} operation, not a transition.")
        return self.transition

    @property
    def permissions(self) -> tuple[Permission, ...]:
        """Each distinct permission of the operation (a create's or an edit's one): of
        every django-fsm ``Transition``
        of a transition's method (one per source), read from them each time (a
        ``Transition``'s permission may be set after the catalog is built)."""
        if self.transition is None:
            return (self.permission or None,)
        transitions = self.transition.meta.transitions.values()
        return tuple(dict.fromkeys(t.permission or None for t in transitions))

    @property
    def prerequisites(self) -> tuple[str, ...]:
        """The permissions ``@operation(requires=...)`` asks of the caller without an
        object, before any of the operation's own."""
        return self.spec.requires if self.spec is not None else ()

    def holding(self, user: Any, known: Known | None = None) -> Holding:
        """What ``user`` holds of this operation before any object is read (see the
        module's docstring). ``user.has_perm`` is cached per user object by Django's
        ``ModelBackend``: asking once per request costs no query per row — and, primed
        from the shared cache (:mod:`affordances.capabilities`), none per request.

        ``known``: the answers for this same ``user`` so far, kept by a caller asking of
        several operations at once (one request's list: the operations of a model mostly
        share their permissions, and Django asks every backend anew for each)."""
        if not getattr(user, "is_authenticated", False):
            return _HOLDS_NOTHING
        if known is None:
            known = {}
        if not known:
            capabilities.prime(user)
        for prerequisite in self.prerequisites:
            # A role's permission, never an object's: without it the operation is
            # nothing to this caller, whatever an object backend would say per object.
            # The same question as a create's model-level permission: shared in ``known``.
            role: tuple[Permission, bool] = (prerequisite, False)
            held: Any = known.get(role, _UNASKED)
            if held is _UNASKED:
                held = known[role] = bool(user.has_perm(prerequisite))
            if not held:
                return _HOLDS_NOTHING
        # A create has no object; a read no permission. An edit's is Django's change
        # permission, which an object backend may grant per object, as a transition's.
        per_object = self.is_transition or self.is_edit
        answers: dict[Permission, bool | None] = {}
        for permission in self.permissions:
            key = (permission, per_object)
            answer: Any = known.get(key, _UNASKED)
            if answer is _UNASKED:
                answer = known[key] = _held_without_object(permission, user, per_object=per_object)
            answers[permission] = answer
        return Holding.of(answers)

    def permits(self, user: Any) -> bool:
        """Whether the caller may know about the operation (the catalog's filter; state
        never matters): it holds, or may hold on some object, one of its permissions.
        Per object, :func:`affordances.evaluation.evaluate` decides."""
        return self.holding(user).anywhere

    def document(self) -> dict[str, Any]:
        """The catalog entry (docs/protocol.md#catalog)."""
        doc: dict[str, Any] = {
            "id": self.urn,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "resource": self.resource.name,
            "kind": self.kind.value,
            "method": self.http_method,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "annotations": self.annotations,
        }
        if self.confirmation_required:
            # Only when true: a client knows before it calls (docs/protocol.md#confirmations).
            doc["confirmationRequired"] = True
        if self.transition is not None:
            doc["transition"] = {
                "field": self.transition.field.name,
                "source": list(self.transition.sources),
                "target": list(self.transition.targets),
            }
        return doc


def _docstring(func: Callable[..., Any]) -> str:
    return inspect.cleandoc(func.__doc__ or "").strip()


def _state(value: Any) -> str:
    return str(value.value if hasattr(value, "value") else value)


def _targets(fsm_transitions: list[Transition]) -> tuple[str, ...]:
    targets: list[str] = []
    for fsm_transition in fsm_transitions:
        target = fsm_transition.target
        if target is None:
            # django-fsm: no target means the state does not change.
            states = [fsm_transition.source]
        elif hasattr(target, "allowed_states"):
            states = list(target.allowed_states or [])
        else:
            states = [target]
        for state in states:
            if _state(state) not in targets:
                targets.append(_state(state))
    return tuple(targets)


def _id_schema(resource: Resource) -> dict[str, Any]:
    return dict(resource.id_schema)


def _transition_input_schema(resource: Resource, spec: OperationSpec) -> dict[str, Any]:
    arguments: dict[str, Any] = (
        serializer_schema(spec.input, direction="request")
        if spec.input is not None
        else {"type": "object", "properties": {}}
    )
    properties = {
        resource.id_argument: {
            **_id_schema(resource),
            "description": f"The id of the {resource.verbose_name}.",
        },
        **dict(arguments.get("properties", {})),
        "expectedVersion": version_schema(
            f"The {resource.verbose_name}'s version you acted on (its validForVersion); "
            "a stale version is refused with stale_version."
        ),
    }
    return {
        "$schema": DIALECT,
        "type": "object",
        "properties": properties,
        "required": [resource.id_argument, *arguments.get("required", [])],
        "additionalProperties": False,
    }


def representation_schema(resource: Resource, *, with_affordances: bool = True) -> dict[str, Any]:
    """Output schema of one object: the resource serializer plus the affordance lists."""
    if resource.serializer_class is None:
        return {"type": "object"}
    schema = serializer_schema(resource.serializer_class, direction="response")
    if with_affordances:
        schema["properties"].update(list_schemas(Shape.FULL))
    return schema


def _list_input_schema(resource: Resource) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    filterset_class: Any = resource.filterset_class
    if filterset_class is not None:
        model = getattr(filterset_class._meta, "model", None) or resource.model
        for name, filter_ in filterset_class.base_filters.items():
            properties[name] = filter_schema(filter_, model)
            label = filter_.label or name.replace("_", " ")
            properties[name]["description"] = (
                f"Only {resource.verbose_name_plural} whose {label} is this."
            )
    properties["page"] = {"type": "integer", "minimum": 1, "description": "Page number, from 1."}
    properties["pageSize"] = {
        "type": "integer",
        "minimum": 1,
        "maximum": resource.max_page_size,
        "description": f"Items per page (default {resource.page_size}).",
    }
    return {
        "$schema": DIALECT,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }


def _order_phrase(resource: Resource) -> str:
    if resource.ordering in (("pk",), ("id",)):
        return "oldest first"
    return "ordered by " + ", ".join(
        f"{name.lstrip('-')} (descending)" if name.startswith("-") else name
        for name in resource.ordering
    )


def _read_operations(resource: Resource) -> list[Operation]:
    item = representation_schema(resource)
    get = Operation(
        name=f"get_{resource.name}",
        version=1,
        title=f"Get {resource.verbose_name}",
        description=(
            f"Read one {resource.verbose_name} you may see, with the operations that apply to "
            f"it now "
            f"(`affordances`, each with its target, bound arguments, constraints and "
            f"`validForVersion`) and, for operations you may use, why the others do not "
            f"(`unavailableAffordances`). Read before you act; unknown or hidden ids are "
            f"not_found."
        ),
        resource=resource,
        kind=Kind.READ,
        http_method="GET",
        input_schema={
            "$schema": DIALECT,
            "type": "object",
            "properties": {
                resource.id_argument: {
                    **_id_schema(resource),
                    "description": f"The id of the {resource.verbose_name}.",
                }
            },
            "required": [resource.id_argument],
            "additionalProperties": False,
        },
        output_schema=item,
        annotations=dict(_READ_ANNOTATIONS),
    )
    list_ = Operation(
        name=f"list_{resource.plural}",
        version=1,
        title=f"List {resource.verbose_name_plural}",
        description=(
            f"List the {resource.verbose_name_plural} you may see, {_order_phrase(resource)}, "
            f"{resource.page_size} per page, each with its current affordances. "
            + ("Use the filters to narrow the list and " if resource.filterset_class else "Use ")
            + "`page` to move through it."
        ),
        resource=resource,
        kind=Kind.READ,
        http_method="GET",
        input_schema=_list_input_schema(resource),
        output_schema={
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "next": nullable({"type": "string"}),
                "previous": nullable({"type": "string"}),
                "results": {"type": "array", "items": item},
            },
            "required": ["count", "results"],
        },
        annotations=dict(_READ_ANNOTATIONS),
    )
    return [get, list_]


def _declared_transitions(
    resource: Resource, fsm_field: FSMFieldMixin
) -> list[tuple[str, Callable[..., Any]]]:
    wrappers = fsm_field.transitions.get(resource.model, {})
    # getmembers() is alphabetical; the declaration order reads better and is stable.
    return sorted(
        wrappers.items(),
        key=lambda pair: inspect.unwrap(pair[1]).__code__.co_firstlineno,
    )


def transition_method_names(resource: Resource) -> list[str]:
    """Every django-fsm transition of the resource, in declaration order, enabled or not.

    Routes are made for all of them once, so an operation switched on later
    (``enabled_by``) is reachable without reloading the URLconf.
    """
    return [
        method_name
        for fsm_field in resource.fsm_fields
        for method_name, _ in _declared_transitions(resource, fsm_field)
    ]


def _transition_operations(resource: Resource) -> list[Operation]:
    operations = []
    item = representation_schema(resource)
    for fsm_field in resource.fsm_fields:
        for method_name, wrapper in _declared_transitions(resource, fsm_field):
            meta = transition_meta(wrapper)
            assert meta is not None  # _declared_transitions yields transitions only
            fsm_transitions = list(meta.transitions.values())
            first = fsm_transitions[0]
            declared: OperationSpec | None = first.custom.get(CUSTOM_KEY)
            if declared is not None and not declared.enabled():
                continue  # switched off by its setting: not part of the catalog now
            # An undeclared transition still joins the catalog (checks warn about it).
            spec = declared or OperationSpec(title=method_name.replace("_", " ").capitalize())
            annotations = {**_TRANSITION_ANNOTATIONS, **spec.annotations}
            operations.append(
                Operation(
                    name=spec.name or f"{method_name}_{resource.name}",
                    version=spec.version,
                    title=spec.title,
                    description=_docstring(first.method),
                    resource=resource,
                    kind=Kind.TRANSITION,
                    http_method="POST",
                    input_schema=_transition_input_schema(resource, spec),
                    output_schema=item,
                    annotations=annotations,
                    method_name=method_name,
                    spec=declared,
                    transition=TransitionFacts(
                        field=fsm_field,
                        meta=meta,
                        sources=tuple(_state(t.source) for t in fsm_transitions),
                        targets=_targets(fsm_transitions),
                    ),
                )
            )
    return operations


def _create_operations(resource: Resource) -> list[Operation]:
    operations = []
    item = representation_schema(resource)
    for attribute, member in inspect.getmembers(resource.model):
        declared: CreateSpec | None = getattr(member, CREATE_ATTRIBUTE, None)
        if declared is None:
            continue
        spec = declared.spec
        arguments = (
            serializer_schema(spec.input, direction="request")
            if spec.input is not None
            else {"type": "object", "properties": {}, "additionalProperties": False}
        )
        operations.append(
            Operation(
                name=spec.name or f"create_{resource.name}",
                version=spec.version,
                title=spec.title,
                description=_docstring(member),
                resource=resource,
                kind=Kind.CREATE,
                http_method="POST",
                input_schema={
                    "$schema": DIALECT,
                    **arguments,
                },
                output_schema=item,
                annotations={
                    **_TRANSITION_ANNOTATIONS,
                    "destructiveHint": False,
                    **spec.annotations,
                },
                permission=declared.permission,
                method_name=attribute,
                spec=spec,
            )
        )
    return operations


def _edit_operations(resource: Resource) -> list[Operation]:
    """``edit_{resource}`` where the registration declares ``EDITABLE_FIELDS``."""
    if not resource.edit_fields:
        return []
    input_class = edits.edit_input(resource)
    arguments = serializer_schema(input_class, direction="request")
    properties = {
        resource.id_argument: {
            **_id_schema(resource),
            "description": f"The id of the {resource.verbose_name}.",
        },
        **dict(arguments.get("properties", {})),
        "expectedVersion": version_schema(
            f"The {resource.verbose_name}'s version you acted on (its validForVersion); "
            "a stale version is refused with stale_version."
        ),
    }
    return [
        Operation(
            name=resource.edit_name,
            version=1,
            title=f"Edit {resource.verbose_name}",
            description=edits.edit_description(resource),
            resource=resource,
            kind=Kind.EDIT,
            http_method="PATCH",
            input_schema={
                "$schema": DIALECT,
                "type": "object",
                "properties": properties,
                "required": [resource.id_argument],
                "additionalProperties": False,
            },
            output_schema=representation_schema(resource),
            annotations=dict(_EDIT_ANNOTATIONS),
            permission=edits.edit_permission(resource),
            # Its role prerequisites as a transition's requires= (Operation.holding).
            spec=OperationSpec(
                title=f"Edit {resource.verbose_name}",
                input=input_class,
                requires=resource.edit_requires,
            ),
        )
    ]


def build_operations(resource: Resource) -> list[Operation]:
    """Reads, then creation, then transitions in declaration order, then the edit."""
    return [
        *_read_operations(resource),
        *_create_operations(resource),
        *_transition_operations(resource),
        *_edit_operations(resource),
    ]
