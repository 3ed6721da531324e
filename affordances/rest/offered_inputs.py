"""An operation's input as DRF describes it: OPTIONS metadata and the browsable API's forms.

One rule for both, and the one every other UI follows (:mod:`affordances.inputs`): the
operation's own input serializer, narrowed by the constraints that apply to this caller
(and object) now — only the allowed choices (a free field the constraints enumerate
turned into a choice), the tighter bounds (inclusive, on the input's step; a date's as
``min``/``max`` of its input), the tighter
lengths, the constraint's pattern as one more ``RegexValidator``, the fields they require;
a related field offers only the objects the caller may see (the registration's
``QUERYSET``), as execution finds only those.
"""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import serializers

from affordances.arguments import NoArguments, narrow_related
from affordances.compat.drf import field_validators, field_with
from affordances.evaluation import Available, evaluate
from affordances.inputs import InputField, html_moment, input_fields
from affordances.operations import Operation

__all__ = ["narrowed_input", "offered_input"]

_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def narrowed_input(
    input_serializer: type[serializers.Serializer[Any]] | None,
    constraints: dict[str, Any],
    *,
    user: Any,
    request: Any,
) -> serializers.Serializer[Any]:
    """A fresh ``input_serializer`` (none: no arguments) narrowed by ``constraints`` and,
    for its related fields, by what ``user`` may see (given the face's ``request``). It
    describes (OPTIONS, the browsable API's forms); execution validates against the
    operation's own serializer and the constraints, once."""
    serializer = (input_serializer or NoArguments)()
    narrow_related(serializer, user, request)
    required = set(constraints.get("required", []))
    properties = constraints.get("properties", {})
    for name, narrowed in properties.items():
        if narrowed is False:
            # Ruled out for this object now (an edit's field, by its state): not offered.
            serializer.fields.pop(name, None)
    for item in input_fields(type(serializer), constraints):
        field = serializer.fields.get(item.name)
        if field is None:
            continue
        if item.name in required:
            field.required = True
        narrowed = _narrowed(field, item, properties.get(item.name, {}))
        if narrowed is not field:
            serializer.fields[item.name] = narrowed
        # The label every face shows (DRF's own squashes camelCase: "Approvedamount").
        serializer.fields[item.name].label = item.label
    return serializer


def _narrowed(
    field: serializers.Field[Any, Any, Any, Any], item: InputField, narrowed: dict[str, Any]
) -> serializers.Field[Any, Any, Any, Any]:
    """``field`` as ``item`` narrows it: the same field when the constraint leaves it as it
    is, else one made with the field's own arguments and the narrowed ones."""
    if item.kind == "choice" and isinstance(field, serializers.ChoiceField):
        field.choices = list(item.choices)
        return field
    if item.kind == "choice":
        # A free field the constraints enumerate: offer exactly those values.
        return serializers.ChoiceField(
            choices=list(item.choices),
            required=field.required,
            label=field.label,
            help_text=field.help_text,
        )
    if item.kind in ("date", "datetime") and (item.earliest or item.latest):
        # OPTIONS reads min_value/max_value (DRF's metadata, as for numbers); the
        # browsable API's input shows them as min/max (this field is the serializer's own
        # copy, made for this request).
        field.min_value = item.earliest  # type: ignore[attr-defined]
        field.max_value = item.latest  # type: ignore[attr-defined]
        field.style = {
            **field.style,
            "template": "affordances/rest/date_input.html",
            "input_type": "date" if item.kind == "date" else "datetime-local",
            "min": html_moment(item.earliest, item.kind),
            "max": html_moment(item.latest, item.kind),
        }
        return field
    changes: dict[str, Any] = {}
    if item.kind in ("decimal", "integer") and any(key in narrowed for key in _BOUNDS):
        cast = int if item.kind == "integer" else (lambda bound: bound)
        for key, bound in (("min_value", item.minimum), ("max_value", item.maximum)):
            if bound is not None:
                changes[key] = cast(bound)
    elif item.kind in ("text", "textarea"):
        if "maxLength" in narrowed:
            changes["max_length"] = item.max_length
        if "minLength" in narrowed:
            changes["min_length"] = item.min_length
        if "pattern" in narrowed:
            own = field_validators(field)
            changes["validators"] = [*own, RegexValidator(narrowed["pattern"])]
    if not changes:
        return field
    made = field_with(field, **changes)
    made.required = field.required
    return made


def offered_input(
    operation: Operation | None, instance: Any, user: Any, request: Any
) -> serializers.Serializer[Any] | None:
    """``operation``'s input narrowed for ``user`` (and ``instance``; ``request``: the
    face's), when it is available to them now; None when it is not — unknown to the
    caller, or refused as it stands."""
    if operation is None:
        return None
    result = evaluate(operation, instance, user)
    if not isinstance(result, Available):
        return None
    return narrowed_input(
        operation.input_serializer, result.constraints, user=user, request=request
    )
