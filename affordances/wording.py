"""What a person reads for an operation's machine names: states, inputs, choices by label.

The catalog speaks in names (``pending``, ``reason``, ``customer_request``) for programs;
a person reads the labels the project gave them: the FSM field's choices, the inputs'
labels and their choices'. The admin's pages and Django's admin log say runs this way.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.utils.text import capfirst

from affordances.catalog import get_catalog
from affordances.inputs import input_fields
from affordances.operations import Operation
from affordances.resources import Resource

__all__ = ["argument_words", "run_title", "state_label", "words_of"]


def state_label(resource: Resource, state: str, field: Any = None) -> str:
    """A state's label from the FSM field's choices (``"pending"`` → ``"Pending"``); the
    state as stored when the field has no such choice (or no state: "—")."""
    if state == "":
        return "—"
    fields = [field] if field is not None else list(resource.fsm_fields)
    for fsm_field in fields:
        for value, label in fsm_field.flatchoices:
            if str(value) == state:
                return str(label)
    return state


def words_of(operation: Operation) -> dict[str, str]:
    """What each machine name an operation's prose or arguments may mention is called:
    its resource's states, its inputs and their choices, by their labels."""
    words: dict[str, str] = {}
    for fsm_field in operation.resource.fsm_fields:
        words.update((str(value), str(label)) for value, label in fsm_field.flatchoices)
    for item in input_fields(operation.input_serializer, {}):
        words[item.name] = item.label
        words.update(item.choices)
    return words


def run_title(resource: Resource, urn: str, name: str) -> str:
    """The title of the operation an audit record names: the catalog's; an edit outside
    the catalog (a registration without ``EDITABLE_FIELDS``) as the catalog's edit would
    be called; an operation no longer in the catalog by its name."""
    operation = get_catalog().lookup(name)
    if operation is not None and operation.urn == urn:
        return operation.title
    return f"Edit {resource.verbose_name}" if urn == resource.edit_urn else name


def argument_words(
    resource: Resource, urn: str, name: str, arguments: dict[str, Any]
) -> list[tuple[str, str]]:
    """A run's arguments as (label, value) pairs; an edit's as each changed field's
    label and "old → new"."""
    if urn == resource.edit_urn and {"changed", "to"} <= arguments.keys():
        before, after = arguments.get("from") or {}, arguments["to"]
        return [
            (
                _field_label(resource, field),
                f"{_value(before.get(field))} → {_value(after.get(field))}",
            )
            for field in arguments["changed"]
        ]
    operation = get_catalog().lookup(name)
    if operation is not None and operation.urn != urn:
        operation = None  # another operation has the name now: its words are not these
    words = words_of(operation) if operation is not None else {}
    # In the input's own order: a stored record's keys come back in the database's order
    # (PostgreSQL's jsonb sorts them by length), not the order they were written in.
    inputs = input_fields(operation.input_serializer, {}) if operation is not None else []
    place = {item.name: index for index, item in enumerate(inputs)}
    ordered = sorted(arguments, key=lambda key: place.get(key, len(place)))
    return [(words.get(key, key), _said(arguments[key], words)) for key in ordered]


def _said(value: Any, words: dict[str, str]) -> str:
    """A value in words: a choice or state by its label, anything else as written."""
    return (words.get(value) if isinstance(value, str) else None) or _value(value)


def _field_label(resource: Resource, name: str) -> str:
    try:
        field = resource.model._meta.get_field(name)
    except FieldDoesNotExist:  # a field removed since the record was written
        return name
    return capfirst(str(getattr(field, "verbose_name", name)))


def _value(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return str(value)
