"""Filters as JSON Schema 2020-12, and JSON Schema as the catalog means it.

Serializers are mapped by :mod:`affordances.fieldschema` (re-exported here, where they
were first published); this module maps django-filter filters (:func:`filter_schema`,
what the MCP list tools and the OpenAPI document take) and spells their JSON values as a
query string does (:func:`filter_query`). :data:`SchemaValidator` is JSON Schema 2020-12
as execution enforces it: decimals exact, lengths before patterns, and the constraint
vocabulary's date bounds (docs/protocol.md#affordances).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError as SchemaValidationError

from affordances.constraints import outside_format_bound
from affordances.fieldschema import (
    DECIMAL_RULE,
    PLAIN_DECIMAL,
    SchemaError,
    add_text_rules,
    argument_fields,
    decimal_pattern,
    decimal_schema,
    nullable,
    related_queryset,
    related_schema,
    serializer_schema,
    text_rules,
)
from affordances.vocabulary import key_schema

__all__ = [
    "DECIMAL_RULE",
    "PLAIN_DECIMAL",
    "SchemaError",
    "SchemaValidator",
    "add_text_rules",
    "argument_fields",
    "decimal_pattern",
    "decimal_schema",
    "filter_query",
    "filter_schema",
    "key_schema",
    "nullable",
    "related_queryset",
    "related_schema",
    "serializer_schema",
    "takes_null",
    "text_rules",
]


def _filter_model(filter_: Any, model: type[models.Model] | None) -> type[models.Model] | None:
    """The model a ``ModelChoiceFilter`` picks from: its queryset's, else the related
    model of the field it filters on."""
    queryset = getattr(filter_, "queryset", None)
    if isinstance(queryset, models.QuerySet):
        return queryset.model
    if model is None:
        return None
    try:
        related = model._meta.get_field(filter_.field_name.split("__")[0]).related_model
    except FieldDoesNotExist:
        return None
    return related if isinstance(related, type) else None


def filter_schema(filter_: Any, model: type[models.Model] | None = None) -> dict[str, Any]:
    """The JSON Schema of one django-filter filter's value, from its form field: what
    the MCP list tools take as an argument and the OpenAPI document as a query parameter.

    ``NumberFilter`` → ``number``; ``BooleanFilter`` → ``boolean``; ``DateFilter``,
    ``DateTimeFilter``, ``TimeFilter``, ``UUIDFilter`` → a string with ``format`` (``date``,
    ``date-time``, ``time``, ``uuid``); a choice filter → ``enum`` of its choices' values
    (as text, as a query string spells them); ``ModelChoiceFilter`` → the related model's
    key schema (:func:`key_schema`); the multiple-choice filters → an ``array`` of those;
    anything else (text, ``__in`` lists, ranges, a lookup choice) → ``string``.
    ``model`` is the filter set's model (for a model choice without a queryset).
    """
    field_class: Any = getattr(filter_, "field_class", forms.CharField)
    if not isinstance(field_class, type) or issubclass(field_class, forms.MultiValueField):
        return {"type": "string"}
    if any(base.__name__ == "BaseCSVField" for base in field_class.__mro__):
        return {"type": "string"}  # "1,2,3": one text, split by the filter
    if issubclass(field_class, forms.ModelMultipleChoiceField | forms.MultipleChoiceField):
        single = dict(filter_schema(_SingleOf(filter_), model))
        return {"type": "array", "items": single}
    if issubclass(field_class, forms.ModelChoiceField):
        related = _filter_model(filter_, model)
        if related is None or filter_.extra.get("to_field_name"):
            return {"type": "string"}
        return key_schema(related)
    if issubclass(field_class, forms.ChoiceField):
        choices = filter_.extra.get("choices")
        if callable(choices) or not choices:
            return {"type": "string"}
        return {"type": "string", "enum": [str(value) for value, _ in choices]}
    if issubclass(field_class, forms.NullBooleanField | forms.BooleanField):
        return {"type": "boolean"}
    # Django's DecimalField and FloatField are IntegerFields: asked first.
    if issubclass(field_class, forms.DecimalField | forms.FloatField):
        # A NumberFilter over an integer column (a key, a count) takes integers only:
        # Django would read 1.5 there as 1.
        return {"type": "integer" if _filters_integers(filter_, model) else "number"}
    if issubclass(field_class, forms.IntegerField):
        return {"type": "integer"}
    for form_field, string_format in _STRING_FORMATS:
        if issubclass(field_class, form_field):
            return {"type": "string", "format": string_format}
    return {"type": "string"}


def _filters_integers(filter_: Any, model: type[models.Model] | None) -> bool:
    """Whether the model field a filter compares with holds integers (a relation: the
    key it points to), following ``field_name``'s ``__`` path."""
    current: Any = model
    field: Any = None
    for part in str(getattr(filter_, "field_name", "") or "").split("__"):
        if current is None:
            return False
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        current = field.related_model if field.is_relation else None
    while field is not None and field.is_relation:
        field = field.target_field
    return isinstance(field, models.AutoField | models.IntegerField)


# DateTimeField before DateField: neither is the other's subclass, but order is kept clear.
_STRING_FORMATS: tuple[tuple[type[forms.Field], str], ...] = (
    (forms.DateTimeField, "date-time"),
    (forms.DateField, "date"),
    (forms.TimeField, "time"),
    (forms.UUIDField, "uuid"),
)


class _SingleOf:
    """One item of a multiple-choice filter, as the single-choice filter it repeats."""

    def __init__(self, filter_: Any) -> None:
        self.field_name = filter_.field_name
        self.extra = filter_.extra
        self.queryset = getattr(filter_, "queryset", None)
        many = filter_.field_class
        self.field_class = (
            forms.ModelChoiceField
            if issubclass(many, forms.ModelMultipleChoiceField)
            else forms.ChoiceField
        )


def filter_query(filters: Mapping[str, Any]) -> dict[str, Any]:
    """Filter arguments from JSON (MCP) as a query string spells them, so a filter set
    reads ``1``, ``true`` or ``[1, 2]`` exactly as ``?book=1``, ``?renewed=true`` or
    ``?tag=1&tag=2``: numbers as text (``1.0`` as ``1``), booleans as ``true``/``false``."""

    def spelled(value: Any) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        if isinstance(value, int | float | Decimal):
            return str(value)
        if isinstance(value, list):
            return [spelled(item) for item in value]
        return value

    return {name: spelled(value) for name, value in filters.items()}


def takes_null(schema: Any) -> bool:
    """Whether ``null`` is itself a value of ``schema`` (a nullable input, whose ``null``
    means something), as far as the schemas of this module go: ``type`` null, or a
    branch of an ``anyOf``/``oneOf`` that is; ``enum``/``const`` holding it."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in (schema.get("enum") or ()) or ("const" in schema and schema["const"] is None):
        return True
    return any(
        takes_null(branch) for key in ("anyOf", "oneOf") for branch in (schema.get(key) or ())
    )


# --- JSON Schema as the catalog means it -----------------------------------------------


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Any:
    """``multipleOf`` in decimal arithmetic: 0.07 is a multiple of 0.01 (not in floats)."""
    if not validator.is_type(instance, "number"):
        return
    try:
        remainder = Decimal(str(instance)) % Decimal(str(divisor))
    except (InvalidOperation, ValueError):
        remainder = Decimal(1)
    if remainder != 0:
        yield SchemaValidationError(f"{instance} is not a multiple of {divisor}")


_PATTERN = Draft202012Validator.VALIDATORS["pattern"]


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    """``pattern`` only on a string within its schema's ``maxLength``: a longer one is
    refused by ``maxLength`` already, and need not be searched (lengths before patterns)."""
    limit = schema.get("maxLength")
    if isinstance(instance, str) and isinstance(limit, int) and len(instance) > limit:
        return
    yield from _PATTERN(validator, pattern, instance, schema)


def _format_bound(upper: bool) -> Any:
    """``formatMinimum``/``formatMaximum`` (the constraint vocabulary's date bounds, as
    ajv-formats reads them): the parsed date or date-time within the bound, inclusive."""
    word = "before" if upper else "after"

    def check(validator: Any, bound: Any, instance: Any, schema: Any) -> Any:
        kind = schema.get("format") if schema.get("format") in ("date", "date-time") else None
        if outside_format_bound(instance, bound, upper=upper, kind=kind):
            yield SchemaValidationError(f"Must be on or {word} {bound}.")

    return check


# JSON Schema 2020-12 as the catalog means it: decimals are exact, lengths come first,
# date bounds compared as dates.
SchemaValidator = validators.extend(
    Draft202012Validator,
    {
        "multipleOf": _multiple_of,
        "pattern": _pattern,
        "formatMinimum": _format_bound(upper=False),
        "formatMaximum": _format_bound(upper=True),
    },
)
