"""An operation's inputs as form fields, narrowed by the constraints — one rule for every UI.

The admin's argument forms, the browsable API and HAL-FORMS templates all show the
same fields with the same narrowing: only the allowed choices, the tighter bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from affordances.schemas import text_rules

__all__ = ["InputField", "input_fields"]


@dataclass(frozen=True)
class InputField:
    name: str
    label: str
    kind: str  # choice | text | textarea | decimal | integer | boolean | date | datetime
    required: bool
    help_text: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    decimal_places: int | None = None
    max_digits: int | None = None
    default: Any = None
    validators: tuple[Any, ...] = ()


def _bound(narrowed: dict[str, Any], key: str, declared: Any) -> Decimal | None:
    value = narrowed.get(key, declared)
    if value is None:
        return None
    if key in narrowed and declared is not None:
        # A constraint only narrows: keep the tighter of the two bounds.
        pick = min if key == "maximum" else max
        value = pick(Decimal(str(value)), Decimal(str(declared)))
    return Decimal(str(value))


def _field(name: str, field: serializers.Field, narrowed: dict[str, Any]) -> InputField:
    # DRF's default label squashes camelCase ("Trackingnumber"); keep explicit labels only.
    default_label = name.replace("_", " ").capitalize()
    common: dict[str, Any] = {
        "name": name,
        "label": _label(name) if field.label in (None, default_label) else str(field.label),
        "required": bool(field.required),
        "help_text": str(field.help_text or ""),
    }
    if field.default is not serializers.empty and not callable(field.default):
        common["default"] = field.default
    if "enum" in narrowed and not isinstance(field, serializers.ChoiceField):
        # A constraint that enumerates a free field turns it into a choice.
        return InputField(
            kind="choice", choices=tuple((str(v), str(v)) for v in narrowed["enum"]), **common
        )
    if isinstance(field, serializers.ChoiceField):
        allowed = narrowed.get("enum")
        choices = tuple(
            (str(value), str(label))
            for value, label in field.choices.items()
            if allowed is None or value in allowed
        )
        return InputField(kind="choice", choices=choices, **common)
    if isinstance(field, serializers.DecimalField):
        return InputField(
            kind="decimal",
            minimum=_bound(narrowed, "minimum", field.min_value),
            maximum=_bound(narrowed, "maximum", field.max_value),
            decimal_places=field.decimal_places,
            max_digits=field.max_digits,
            **common,
        )
    if isinstance(field, serializers.IntegerField):
        return InputField(
            kind="integer",
            minimum=_bound(narrowed, "minimum", field.min_value),
            maximum=_bound(narrowed, "maximum", field.max_value),
            **common,
        )
    if isinstance(field, serializers.BooleanField):
        return InputField(kind="boolean", **{**common, "required": False})
    if isinstance(field, serializers.DateTimeField):
        return InputField(kind="datetime", **common)
    if isinstance(field, serializers.DateField):
        return InputField(kind="date", **common)
    if isinstance(field, serializers.CharField):
        regexes = [v for v in field.validators if hasattr(v, "regex")]
        max_length = getattr(field, "max_length", None)
        # What the field refuses beyond its validators (blank, NUL), as the catalog says.
        rules = text_rules(field)
        lengths = [n for n in (getattr(field, "min_length", None), rules.get("minLength")) if n]
        return InputField(
            kind="textarea" if (max_length or 0) > 200 else "text",
            min_length=max(lengths, default=None),
            max_length=max_length,
            pattern=(
                regexes[0].regex.pattern
                if regexes
                else narrowed.get("pattern", rules.get("pattern"))
            ),
            validators=tuple(regexes),
            **common,
        )
    return InputField(kind="text", **common)


def _label(name: str) -> str:
    """``trackingNumber`` → ``Tracking number``."""
    words = []
    current = ""
    for char in name.replace("_", " "):
        if char.isupper() and current:
            words.append(current)
            current = char.lower()
        else:
            current += char
    words.append(current)
    return " ".join(word.strip() for word in words if word.strip()).capitalize()


def input_fields(
    input_serializer: type[serializers.Serializer] | None, constraints: dict[str, Any]
) -> list[InputField]:
    """The writable fields of ``input_serializer``, narrowed by ``constraints``."""
    if input_serializer is None:
        return []
    properties = constraints.get("properties", {})
    required = set(constraints.get("required", []))
    fields = []
    for name, field in input_serializer().fields.items():
        if field.read_only:
            continue
        item = _field(name, field, properties.get(name, {}))
        if name in required and not item.required:
            item = InputField(**{**item.__dict__, "required": True})
        fields.append(item)
    return fields
