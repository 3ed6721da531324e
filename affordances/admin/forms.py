"""An operation's inputs as a Django form for the admin (see :mod:`affordances.inputs`).

The form is for people: it offers only the choices and bounds that apply to this object
and user. It does not decide anything — the execution path validates, once, for every face.
"""

from __future__ import annotations

from typing import Any

from django import forms
from rest_framework import serializers

from affordances.inputs import InputField, html_moment, input_fields

__all__ = ["operation_form_class", "posted_arguments"]


def _form_field(item: InputField) -> forms.Field:
    common: dict[str, Any] = {
        "required": item.required,
        "label": item.label,
        "help_text": item.help_text,
    }
    if item.kind == "choice":
        # Blank first, required or not: an untouched form must choose nothing (a required
        # choice left blank is refused, by the browser and by the execution path).
        choices = [("", "---------"), *item.choices]
        return forms.ChoiceField(choices=choices, **common)
    if item.kind == "decimal":
        return forms.DecimalField(
            max_digits=item.max_digits,
            decimal_places=item.decimal_places,
            max_value=item.maximum,
            min_value=item.minimum,
            **common,
        )
    if item.kind == "integer":
        return forms.IntegerField(
            max_value=None if item.maximum is None else int(item.maximum),
            min_value=None if item.minimum is None else int(item.minimum),
            **common,
        )
    if item.kind == "boolean":
        return forms.BooleanField(**common)
    if item.kind == "datetime":
        # A datetime-local input, its bounds in the current time zone without an offset
        # (as HAL-FORMS shows them); Django's DateTimeField reads the ISO value it sends.
        attrs = {"type": "datetime-local", "step": "1"}
        for key, bound in (("min", item.earliest), ("max", item.latest)):
            local = html_moment(bound, "datetime")
            if local:
                attrs[key] = local
        moment = forms.DateTimeInput(attrs=attrs, format="%Y-%m-%dT%H:%M:%S")
        return forms.DateTimeField(widget=moment, **common)
    if item.kind == "date":
        attrs = {"type": "date"}
        attrs.update({key: b for key, b in (("min", item.earliest), ("max", item.latest)) if b})
        return forms.DateField(widget=forms.DateInput(attrs=attrs), **common)
    widget = forms.Textarea(attrs={"rows": 3}) if item.kind == "textarea" else None
    return forms.CharField(
        max_length=item.max_length,
        min_length=item.min_length,
        validators=list(item.validators),
        widget=widget,
        **common,
    )


def operation_form_class(
    input_serializer: type[serializers.Serializer[Any]] | None,
    constraints: dict[str, Any],
    *,
    versioned: bool = True,
) -> type[forms.Form]:
    """A form class with one field per input, plus the hidden version it was rendered for."""
    fields: dict[str, forms.Field] = {
        item.name: _form_field(item) for item in input_fields(input_serializer, constraints)
    }
    if versioned:
        fields["expectedVersion"] = forms.IntegerField(widget=forms.HiddenInput, required=False)
    return type("OperationForm", (forms.Form,), fields)


def posted_arguments(data: Any, form_class: type[forms.Form]) -> dict[str, Any]:
    """The posted values of the form's fields, as arguments; empty ones are left out.

    Raw strings on purpose: the execution path parses and validates them, once.
    """
    return {
        name: value
        for name, value in data.items()
        if name in form_class.base_fields and value != ""
    }
