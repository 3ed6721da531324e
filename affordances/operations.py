"""One ``Operation`` per django-fsm transition (and per read) of a registered model.

Everything django-fsm knows is read from its own objects — ``field.transitions``,
each wrapper's ``_django_fsm`` meta and its ``Transition`` objects — never restated.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any

from django_fsm import FSMFieldMixin, FSMMeta, Transition
from rest_framework import serializers

from affordances.conf import settings
from affordances.declarations import CREATE_ATTRIBUTE, CUSTOM_KEY, CreateSpec, OperationSpec
from affordances.resources import Resource
from affordances.schemas import nullable, serializer_schema

__all__ = ["Kind", "Operation", "TransitionFacts", "build_operations", "transition_method_names"]


class Kind(StrEnum):
    """What an operation does: read objects, move one through its FSM, or make one."""

    READ = "read"
    TRANSITION = "transition"
    CREATE = "create"


_TRANSITION_ANNOTATIONS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": False,
}
_READ_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


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
    permission: str | Callable[[Any, Any], bool] | None = None
    # The model attribute that runs it: the transition method, or the creating classmethod.
    method_name: str | None = None
    spec: OperationSpec | None = None
    transition: TransitionFacts | None = None

    @property
    def input_serializer(self) -> type[serializers.Serializer] | None:
        return self.spec.input if self.spec is not None else None

    @cached_property
    def urn(self) -> str:
        slug = self.name.replace("_", "-")
        return f"urn:{settings.NAMESPACE}:operation:{slug}:v{self.version}"

    @property
    def is_transition(self) -> bool:
        return self.kind is Kind.TRANSITION

    @property
    def is_create(self) -> bool:
        return self.kind is Kind.CREATE

    @property
    def facts(self) -> TransitionFacts:
        """The FSM facts of a transition (a programming error to ask of another kind)."""
        if self.transition is None:
            raise TypeError(f"{self.name} is a {self.kind} operation, not a transition.")
        return self.transition

    def permits(self, user: Any) -> bool:
        """Whether the caller has the capability (the catalog's filter; state never matters).

        A string permission is checked at model level — ``user.has_perm`` is cached per
        user object, so a list of N objects costs no extra query. A callable permission
        needs an object; it is checked by :func:`affordances.evaluation.evaluate`.
        """
        if not getattr(user, "is_authenticated", False):
            return False
        if isinstance(self.permission, str):
            return bool(user.has_perm(self.permission))
        return True

    def document(self) -> dict[str, Any]:
        """The catalog entry (SPEC §4)."""
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
    if resource.pk_is_integer:
        return {"type": "integer", "minimum": 1}
    return {"type": "string", "minLength": 1}


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
        "expectedVersion": {
            "type": "integer",
            "minimum": 1,
            "description": (
                f"The {resource.verbose_name}'s version you acted on (its validForVersion); "
                "a stale version is refused with stale_version."
            ),
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
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
        schema["properties"]["affordances"] = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "operation": {"type": "string"},
                    "name": {"type": "string"},
                    "title": {"type": "string"},
                    "method": {"type": "string"},
                    "target": {"type": "string", "format": "uri"},
                    "arguments": {"type": "object"},
                    "constraints": {"type": "object"},
                    "validForVersion": {"type": "integer"},
                },
                "required": ["operation", "name", "method", "target", "arguments"],
            },
        }
        schema["properties"]["unavailableAffordances"] = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "operation": {"type": "string"},
                    "name": {"type": "string"},
                    "reason": {"type": "string"},
                },
                "required": ["operation", "name", "reason"],
            },
        }
    return schema


def _list_input_schema(resource: Resource) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    filterset_class: Any = resource.filterset_class
    if filterset_class is not None:
        for name, filter_ in filterset_class.base_filters.items():
            choices = filter_.extra.get("choices")
            if choices:
                properties[name] = {"type": "string", "enum": [str(value) for value, _ in choices]}
            else:
                properties[name] = {"type": "string"}
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
        "$schema": "https://json-schema.org/draft/2020-12/schema",
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
            "$schema": "https://json-schema.org/draft/2020-12/schema",
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
            meta: FSMMeta = wrapper._django_fsm  # type: ignore[attr-defined]
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
                    permission=first.permission,
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
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
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


def build_operations(resource: Resource) -> list[Operation]:
    """Reads, then creation, then transitions in declaration order."""
    return [
        *_read_operations(resource),
        *_create_operations(resource),
        *_transition_operations(resource),
    ]
