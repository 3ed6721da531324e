"""An operation's inputs as form fields, narrowed by the constraints — one rule for every UI.

The admin's argument forms, the browsable API and OPTIONS, and HAL-FORMS templates all
render the same :class:`InputField` per input: the input serializer's field narrowed by
every keyword of the constraint vocabulary (:data:`affordances.constraints.CONSTRAINT_KEYWORDS`)
— the offered choices (``enum``, ``const``: each one that satisfies the whole
constraint), inclusive bounds on the input's step (``minimum``, ``maximum`` and the
exclusive ones, the tighter bound winning), a date's or date-time's earliest and latest
value (``formatMinimum``, ``formatMaximum``), lengths, and one pattern that is the
input's own and the constraint's together.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone, translation
from django.utils.text import capfirst
from rest_framework import serializers

from affordances.caches import Cache
from affordances.constraints import conjoined_pattern, format_bounds, inclusive_bounds, moment
from affordances.schemas import (
    SchemaValidator,
    argument_fields,
    decimal_pattern,
    related_schema,
    text_rules,
)

__all__ = ["InputField", "html_moment", "input_fields", "input_label"]


@dataclass(frozen=True)
class InputField:
    name: str
    label: str
    kind: str  # choice | text | textarea | decimal | integer | boolean | date | datetime
    required: bool
    help_text: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    # Inclusive, on ``step`` (exclusive bounds of the constraint made inclusive on it).
    minimum: Decimal | None = None
    maximum: Decimal | None = None
    step: Decimal | None = None
    # A date's (``YYYY-MM-DD``) or date-time's (RFC 3339) inclusive bounds, as spelled.
    earliest: str | None = None
    latest: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    # What a string must match: the field's own pattern and the constraint's, as one.
    pattern: str | None = None
    decimal_places: int | None = None
    max_digits: int | None = None
    default: Any = None
    # The field's regex validators and the constraint's pattern, to validate with.
    validators: tuple[Any, ...] = ()


def _offered(
    field: serializers.Field[Any, Any, Any, Any], narrowed: dict[str, Any]
) -> tuple[tuple[str, str], ...] | None:
    """The choices of a choice field, or of a field the constraint enumerates: each one
    every keyword of the constraint allows. None: not a choice."""
    if isinstance(field, serializers.ChoiceField):
        candidates = [(value, str(label)) for value, label in field.choices.items()]
    elif "const" in narrowed or "enum" in narrowed:
        values = [narrowed["const"]] if "const" in narrowed else list(narrowed["enum"])
        # Only what the field itself takes: a form offers nothing execution refuses.
        candidates = [(value, str(value)) for value in values if _takes(field, value)]
    else:
        return None
    allows = SchemaValidator(narrowed).is_valid
    return tuple((str(value), label) for value, label in candidates if allows(value))


def _takes(field: serializers.Field[Any, Any, Any, Any], value: Any) -> bool:
    try:
        field.run_validation(value)
    except (serializers.ValidationError, DjangoValidationError):
        return False
    return True


def _bounds(
    field: serializers.Field[Any, Any, Any, Any], narrowed: dict[str, Any], step: Decimal | None
) -> dict[str, Any]:
    declared = {"minimum": field.min_value, "maximum": field.max_value}  # type: ignore[attr-defined]
    minimum, maximum = inclusive_bounds([declared, narrowed], step)
    return {"minimum": minimum, "maximum": maximum, "step": step}


def _field(
    name: str, field: serializers.Field[Any, Any, Any, Any], narrowed: dict[str, Any]
) -> InputField:
    common: dict[str, Any] = {
        "name": name,
        "label": input_label(name, field),
        "required": bool(field.required),
        "help_text": str(field.help_text or ""),
    }
    if field.default is not serializers.empty and not callable(field.default):
        common["default"] = field.default
    choices = _offered(field, narrowed)
    if choices is not None:
        return InputField(kind="choice", choices=choices, **common)
    related = related_schema(field)
    if related is not None and related.get("type") == "integer":
        # An integer key typed in: bounded as the key schema says, narrowed as any integer.
        minimum, maximum = inclusive_bounds([related, narrowed], Decimal(1))
        return InputField(
            kind="integer", minimum=minimum, maximum=maximum, step=Decimal(1), **common
        )
    if isinstance(field, serializers.DecimalField):
        places = field.decimal_places
        return InputField(
            kind="decimal",
            **_bounds(field, narrowed, Decimal(1).scaleb(-places) if places is not None else None),
            # The decimal rule's string: the plain decimals the field takes.
            pattern=decimal_pattern(field),
            decimal_places=places,
            max_digits=field.max_digits,
            **common,
        )
    if isinstance(field, serializers.IntegerField):
        return InputField(kind="integer", **_bounds(field, narrowed, Decimal(1)), **common)
    if isinstance(field, serializers.BooleanField):
        return InputField(kind="boolean", **{**common, "required": False})
    if isinstance(field, serializers.DateTimeField | serializers.DateField):
        earliest, latest = format_bounds([narrowed])
        kind = "datetime" if isinstance(field, serializers.DateTimeField) else "date"
        return InputField(kind=kind, earliest=earliest, latest=latest, **common)
    if isinstance(field, serializers.CharField):
        regexes = [v for v in field.validators if hasattr(v, "regex")]
        declared_max = getattr(field, "max_length", None)
        # What the field refuses beyond its validators (blank, NUL), as the catalog says.
        rules = text_rules(field)
        own = [r.regex.pattern for r in regexes]
        if not own and "pattern" in rules:
            own = [rules["pattern"]]
        extra = [narrowed["pattern"]] if "pattern" in narrowed else []
        lower = [getattr(field, "min_length", None), rules.get("minLength")]
        lower.append(narrowed.get("minLength"))
        upper = [n for n in (declared_max, narrowed.get("maxLength")) if n is not None]
        return InputField(
            kind="textarea" if (declared_max or 0) > 200 else "text",
            min_length=max((n for n in lower if n), default=None),
            max_length=min(upper, default=None),
            pattern=conjoined_pattern([*own, *extra]),
            validators=(*regexes, *(RegexValidator(pattern) for pattern in extra)),
            **common,
        )
    return InputField(kind="text", **common)


def html_moment(value: str | None, kind: str) -> str | None:
    """A date bound as an HTML date input (``YYYY-MM-DD``) or ``datetime-local`` input
    takes it in ``min``/``max``: a date-time in the current time zone without its offset,
    as a value typed there without one is read."""
    if value is None or kind != "datetime":
        return value
    parsed = moment(value, "date-time")
    if not isinstance(parsed, datetime):
        return None
    local = timezone.localtime(parsed).replace(tzinfo=None)
    return local.isoformat(timespec="milliseconds" if local.microsecond else "seconds")


def input_label(name: str, field: serializers.Field[Any, Any, Any, Any]) -> str:
    """What an input is called on every face (HAL-FORMS' prompt, the forms, OPTIONS): the
    field's own label; else, for a model serializer's field, its model field's
    ``verbose_name``; else its name as words. DRF's default label squashes camelCase
    (``approvedAmount`` → "Approvedamount"), so it counts as none."""
    if field.label not in (None, name.replace("_", " ").capitalize()):
        return str(field.label)
    model = getattr(getattr(field.parent, "Meta", None), "model", None)
    source = field.source or name
    if isinstance(model, type) and issubclass(model, models.Model) and "." not in source:
        try:
            verbose = getattr(model._meta.get_field(source), "verbose_name", None)
        except FieldDoesNotExist:
            verbose = None
        if verbose:
            return capfirst(str(verbose))
    return _label(name)


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


# Each input serializer's fields narrowed by one constraint, in one language (labels and
# choices are translated when built): what an input serializer says is fixed for the
# process, as the catalog's schemas are, so the fields are built once per constraint —
# not on every HAL-FORMS response, OPTIONS or form. Forgotten with the catalog
# (affordances.registry); bound: 1,024 entries (a constraint spelled per object, a
# bound from its amount, evicts the least recently used).
_FIELDS: Cache[tuple[type[Any], str, str | None], tuple[InputField, ...]] = Cache(
    "input fields", keys="input serializer, constraints' repr, language", max_entries=1024
)


def input_fields(
    input_serializer: type[serializers.Serializer[Any]] | None, constraints: dict[str, Any]
) -> list[InputField]:
    """The writable fields of ``input_serializer``, narrowed by ``constraints`` (an input
    they rule out, ``false``, is no field)."""
    if input_serializer is None:
        return []
    # repr tells JSON values apart exactly (1 and "1", 1.0 and 1; true and 1).
    key = (input_serializer, repr(constraints), translation.get_language())
    return list(_FIELDS.get(key, lambda: _build(input_serializer, constraints)))


def _build(
    input_serializer: type[serializers.Serializer[Any]], constraints: dict[str, Any]
) -> tuple[InputField, ...]:
    properties = constraints.get("properties", {})
    required = set(constraints.get("required", []))
    fields = []
    for name, field in argument_fields(input_serializer()).items():
        narrowed = properties.get(name, {})
        if narrowed is False:
            continue  # not to be sent for this object now (an edit's field, by its state)
        item = _field(name, field, narrowed)
        if name in required and not item.required:
            item = replace(item, required=True)
        fields.append(item)
    return tuple(fields)
