"""An operation's input as DRF describes it: OPTIONS metadata and the browsable API's forms.

One rule for both, and the one every other UI follows (:mod:`affordances.inputs`): the
operation's own input serializer, narrowed by the constraints that apply to this caller
(and object) now — only the allowed choices, a free field the constraints enumerate
turned into a choice, the tighter bounds, the fields they require.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from affordances.arguments import NoArguments
from affordances.evaluation import Available, evaluate
from affordances.inputs import input_fields
from affordances.operations import Operation

__all__ = ["narrowed_input", "offered_input"]


def narrowed_input(
    input_serializer: type[serializers.Serializer] | None, constraints: dict[str, Any]
) -> serializers.Serializer:
    """A fresh ``input_serializer`` (none: no arguments) narrowed by ``constraints``, to
    describe, never to validate: execution validates against the operation's own."""
    serializer = (input_serializer or NoArguments)()
    required = set(constraints.get("required", []))
    for item in input_fields(type(serializer), constraints):
        field = serializer.fields.get(item.name)
        if field is None:
            continue
        if item.name in required:
            field.required = True
        if item.kind == "choice" and isinstance(field, serializers.ChoiceField):
            field.choices = list(item.choices)
        elif item.kind == "choice":
            # A free field the constraints enumerate: offer exactly those values.
            serializer.fields[item.name] = serializers.ChoiceField(
                choices=list(item.choices),
                required=field.required,
                label=field.label,
                help_text=field.help_text,
            )
        elif item.kind in ("decimal", "integer"):
            for key, bound in (("min_value", item.minimum), ("max_value", item.maximum)):
                if bound is not None and bound != getattr(field, key, None):
                    setattr(field, key, int(bound) if item.kind == "integer" else bound)
    return serializer


def offered_input(
    operation: Operation | None, instance: Any, user: Any
) -> serializers.Serializer | None:
    """``operation``'s input narrowed for ``user`` (and ``instance``), when it is available
    to them now; None when it is not — unknown to the caller, or refused as it stands."""
    if operation is None:
        return None
    result = evaluate(operation, instance, user)
    if not isinstance(result, Available):
        return None
    return narrowed_input(operation.input_serializer, result.constraints)
