"""An operation's inputs as a Django form for the admin (see :mod:`affordances.inputs`).

The form is for people: it offers only the choices and bounds that apply to this object
and user. It does not decide anything — the execution path validates, once, for every face.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin import helpers
from django.utils.html import conditional_escape
from rest_framework import serializers

from affordances.inputs import InputField, html_moment, input_fields
from affordances.problems import Problem

__all__ = ["admin_form", "limits", "operation_form_class", "posted_arguments", "show_problem"]


def limits(item: InputField) -> str:
    """The bounds an input takes on this object, for this user, in words ("At least 0.01
    and at most 300.00."): said beside the input before it is submitted, not only in the
    error after. The bounds are the narrowed ones (the constraint's and the input's own,
    the tighter winning), as the execution path checks them."""
    if item.kind in ("decimal", "integer"):
        low, high = item.minimum, item.maximum
    elif item.kind in ("date", "datetime"):
        earliest = html_moment(item.earliest, item.kind)
        latest = html_moment(item.latest, item.kind)
        if earliest is not None and latest is not None:
            return f"From {earliest} to {latest}."
        if earliest is not None:
            return f"From {earliest}."
        return f"Until {latest}." if latest is not None else ""
    elif item.kind in ("text", "textarea"):
        if item.min_length and item.max_length:
            return f"{item.min_length} to {item.max_length} characters."
        if item.max_length:
            return f"At most {item.max_length} characters."
        return f"At least {item.min_length} characters." if item.min_length else ""
    else:
        return ""
    if low is not None and high is not None:
        return f"At least {low} and at most {high}."
    if high is not None:
        return f"At most {high}."
    return f"At least {low}." if low is not None else ""


def _help_text(item: InputField) -> str:
    # Escaped: Django's admin renders a field's help text as HTML (|safe).
    said = " ".join(part for part in (item.help_text, limits(item)) if part)
    return str(conditional_escape(said))


def _form_field(item: InputField) -> forms.Field:
    common: dict[str, Any] = {
        "required": item.required,
        "label": item.label,
        "help_text": _help_text(item),
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


def admin_form(form: forms.Form) -> helpers.AdminForm:
    """The form as Django's admin lays out its own: one aligned fieldset of the visible
    inputs, rendered by the admin's ``includes/fieldset.html`` of the installed Django."""
    visible = [field.name for field in form.visible_fields()]
    # Django types AdminForm for a ModelForm; it reads only what every form has.
    return helpers.AdminForm(form, [(None, {"fields": visible})], {})  # type: ignore[arg-type]


def show_problem(form: forms.Form, problem: Problem) -> None:
    """Put the execution path's verdict on the form, and only it: the execution path
    validates every argument, once, for every face, so the form's own checks (Django's
    "Ensure this value is less than or equal to 300.00.") would only say each error a
    second time, in other words."""
    form.errors.clear()  # validates the bound form (cleaned_data), then forgets its verdict
    for field, errors in (problem.errors or {}).items():
        target = field if field in form.fields else None
        for error in errors:
            form.add_error(target, error)
    if not problem.errors:
        form.add_error(None, problem.detail)
