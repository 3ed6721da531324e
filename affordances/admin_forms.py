"""An operation's input serializer as a Django form, narrowed by the constraints.

The form is for people: it offers only the choices and bounds that apply to this object
and user. It does not validate on its own — the execution path does, once, for every face.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from rest_framework import serializers

__all__ = ["operation_form_class"]


def _narrowed(constraints: dict[str, Any], name: str) -> dict[str, Any]:
    return constraints.get("properties", {}).get(name, {})


def _form_field(field: serializers.Field, narrowed: dict[str, Any]) -> forms.Field:
    common: dict[str, Any] = {
        "required": field.required,
        "label": field.label or (field.field_name or "").replace("_", " ").capitalize(),
        "help_text": field.help_text or "",
    }
    if isinstance(field, serializers.ChoiceField):
        allowed = narrowed.get("enum")
        choices = [
            (value, label)
            for value, label in field.choices.items()
            if allowed is None or value in allowed
        ]
        if not field.required:
            choices = [("", "---------"), *choices]
        return forms.ChoiceField(choices=choices, **common)
    if isinstance(field, serializers.DecimalField):
        maximum = narrowed.get("maximum", field.max_value)
        return forms.DecimalField(
            max_digits=field.max_digits,
            decimal_places=field.decimal_places,
            max_value=Decimal(str(maximum)) if maximum is not None else None,
            min_value=field.min_value,
            **common,
        )
    if isinstance(field, serializers.IntegerField):
        return forms.IntegerField(
            max_value=narrowed.get("maximum", field.max_value),
            min_value=narrowed.get("minimum", field.min_value),
            **common,
        )
    if isinstance(field, serializers.BooleanField):
        return forms.BooleanField(**{**common, "required": False})
    if isinstance(field, serializers.DateTimeField):
        return forms.DateTimeField(**common)
    if isinstance(field, serializers.DateField):
        return forms.DateField(widget=forms.DateInput(attrs={"type": "date"}), **common)
    if isinstance(field, serializers.CharField):
        max_length = getattr(field, "max_length", None)
        widget = forms.Textarea(attrs={"rows": 3}) if (max_length or 0) > 200 else None
        return forms.CharField(
            max_length=max_length,
            min_length=getattr(field, "min_length", None),
            validators=[v for v in field.validators if hasattr(v, "regex")],
            widget=widget,
            **common,
        )
    return forms.CharField(**common)


def operation_form_class(
    input_serializer: type[serializers.Serializer] | None, constraints: dict[str, Any]
) -> type[forms.Form]:
    """A form class with one field per serializer field, plus the hidden version."""
    fields: dict[str, forms.Field] = {}
    if input_serializer is not None:
        for name, field in input_serializer().fields.items():
            if not field.read_only:
                fields[name] = _form_field(field, _narrowed(constraints, name))
    fields["expectedVersion"] = forms.IntegerField(widget=forms.HiddenInput, required=False)
    return type("OperationForm", (forms.Form,), fields)
