"""Field edits through the rules: the ``edit_{resource}`` operation.

A registration that declares ``EDITABLE_FIELDS`` gets one more catalog operation,
``edit_{resource}`` (``kind: edit``, ``PATCH`` on the object's URL): the declared plain
fields, each optional, through the one execution path — the object visible through the
registration's ``QUERYSET``, Django's ``change`` permission on it, the version, the
fields the object's state leaves editable, the input serializer made from the model's
fields and the model's own validation, one audit record, "this object changed"
published on commit. The admin's change form saves through the same path
(:func:`affordances.execution.perform_edit`).

This module says what the operation is made of; :mod:`affordances.execution` runs it.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from django.contrib.auth import get_permission_codename
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models.fields import AutoFieldMixin
from rest_framework import serializers

from affordances.conf import ANY_STATE
from affordances.object_permissions import Ask
from affordances.resources import Resource


class _Holding(Protocol):
    """What :class:`affordances.operations.Holding` answers (the operations are built
    from this module, so they are named by what is asked of them)."""

    @property
    def anywhere(self) -> bool: ...

    @property
    def everywhere(self) -> bool: ...

    def on(
        self, instance: Any, user: Any, fsm_transition: None, held: Ask | None = None
    ) -> tuple[bool, bool]: ...


class _Edit(Protocol):
    """An ``edit_{resource}`` operation (:class:`affordances.operations.Operation`)."""

    @property
    def resource(self) -> Resource: ...

    def holding(self, user: Any) -> _Holding: ...


__all__ = [
    "EditInput",
    "edit_description",
    "edit_input",
    "edit_permission",
    "editable_now",
    "field_problem",
    "narrowing",
    "not_editable",
]


class EditInput(serializers.ModelSerializer):  # type: ignore[type-arg]
    """The input of an ``edit_{resource}``: the declared fields, each optional (a partial
    update), validated as the model's fields — against the object being edited (its
    ``instance`` in the context), so a unique field keeps its own value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("partial", True)
        super().__init__(*args, **kwargs)
        if self.instance is None:
            self.instance = self.context.get("instance")


def _component(resource: Resource) -> str:
    """``edit_purchase_request`` → ``EditPurchaseRequestInput`` (the OpenAPI component)."""
    words = re.split(r"[^A-Za-z0-9]+", resource.edit_name)
    return "".join(word.capitalize() for word in words) + "Input"


def edit_input(resource: Resource) -> type[EditInput]:
    """The input serializer of ``resource``'s edit: a ``ModelSerializer`` of its
    ``EDITABLE_FIELDS``, none of them required."""
    names = list(resource.edit_fields)
    meta = type(
        "Meta",
        (),
        {
            "model": resource.model,
            "fields": names,
            "extra_kwargs": {name: {"required": False} for name in names},
        },
    )
    made: type[EditInput] = type(
        _component(resource),
        (EditInput,),
        {"Meta": meta, "__module__": __name__, "__doc__": None},
    )
    return made


def edit_permission(resource: Resource) -> str:
    """Django's ``change`` permission of the model (``app_label.change_model``)."""
    opts = resource.model._meta
    return f"{opts.app_label}.{get_permission_codename('change', opts)}"


def editable_now(
    operation: _Edit,
    instance: Any,
    user: Any,
    *,
    holding: _Holding | None = None,
    held: Ask | None = None,
) -> frozenset[str] | None:
    """The one answer to "which fields may ``user`` change on ``instance`` now", which
    every face adapts to (the affordance entry and its HAL-FORMS template, OPTIONS and
    the browsable form, the MCP result, execution, the admin's change form).

    None: the edit is nothing to this caller on this object — it lacks a role
    prerequisite (``EDIT_REQUIRES``), or Django's change permission (model-wide, or on
    this object where an object backend answers). Otherwise the declared fields the
    object's state leaves editable (empty: refused as a state is, ``invalid_state``).
    ``holding``: what the caller holds without an object, if worked out already;
    ``held``: a page's answers on its objects (:meth:`Holding.on`)."""
    if holding is None:
        holding = operation.holding(user)
    if not holding.anywhere:
        return None
    if not holding.everywhere and not holding.on(instance, user, None, held)[0]:
        return None
    return operation.resource.editable_in(instance)


def narrowing(resource: Resource, editable: frozenset[str]) -> dict[str, Any]:
    """The edit's constraints on an object whose state leaves only ``editable``: each
    other declared field ``false`` (JSON Schema's "not to be sent"), so the affordance
    entry, its HAL-FORMS template, OPTIONS and a client validating ``allOf`` offer only
    what may change now; ``{}`` when every declared field may."""
    ruled_out = [name for name in resource.edit_fields if name not in editable]
    return {"properties": dict.fromkeys(ruled_out, False)} if ruled_out else {}


def not_editable(resource: Resource, state: str) -> str:
    """Why a declared field is refused on an object in ``state`` (its 400's message)."""
    noun = resource.model._meta.verbose_name
    return f"Not editable while the {noun} is {state or 'as it is'}; use an operation."


def edit_description(resource: Resource) -> str:
    """The catalog entry's description, written from the declaration."""
    noun = resource.verbose_name
    declared = resource.editable_fields
    names = ", ".join(f"`{name}`" for name in resource.edit_fields)
    by_state = [state for state in declared if state != ANY_STATE]
    when = (
        f" Which of them may change depends on the {noun}'s state: "
        + "; ".join(
            f"{'any state' if state == ANY_STATE else state}: "
            + ", ".join(f"`{name}`" for name in declared[state])
            for state in declared
        )
        + ". In a state with none it is unavailable (invalid_state)."
        if by_state
        else ""
    )
    return (
        f"Change plain fields of one {noun} you may change: {names}. Send only the fields "
        f"to change, each optional, with the expectedVersion you read (a stale one is "
        f"refused with stale_version); any other field is a validation_error. Its state "
        f"changes only through its operations.{when}"
    )


def field_problem(resource: Resource, name: str) -> str | None:
    """Why ``name`` cannot be one of ``resource``'s ``EDITABLE_FIELDS``, or None."""
    model = resource.model
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return f"{model.__name__} has no field {name!r}"
    if field.name != name:
        return f"{name!r} is not a field's name (the field is {field.name!r})"
    if not isinstance(field, models.Field) or not field.concrete or field.many_to_many:
        return f"{name!r} is not a plain field of the model (a relation's reverse, or many-to-many)"
    if field.primary_key or isinstance(field, AutoFieldMixin):
        return f"{name!r} is the primary key"
    if field in resource.fsm_fields:
        return f"{name!r} is an FSM field: its state changes only through operations"
    if name == resource.version_field:
        return f"{name!r} is the version field: every run bumps it"
    if not field.editable:
        return f"{name!r} is not editable (editable=False, auto_now)"
    return None
