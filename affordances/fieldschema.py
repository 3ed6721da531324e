"""DRF serializer fields as JSON Schema 2020-12: the one mapper every face reads.

The catalog (an operation's input and output), the MCP tool list, HAL-FORMS, the admin
and OPTIONS (through :mod:`affordances.inputs`) all describe a serializer with
:func:`serializer_schema`; the OpenAPI face alone uses drf-spectacular, through its
public extension points. No drf-spectacular at import or run time here: a project that
serves only MCP needs none.

The mapping states what DRF enforces, field by field: a ``CharField``'s lengths, its
``RegexValidator`` as ``pattern``, and what every writable one refuses (:func:`text_rules`:
NUL, and without ``allow_blank`` ``""`` and whitespace alone); numbers' bounds; choices
as ``enum`` (the choices listed in the description); dates, date-times, e-mail
addresses, URLs and UUIDs as a ``format``; a related input as the related model's key
(:func:`affordances.vocabulary.key_schema`) or its slug field's value; lists, nested
serializers, ``allow_null`` (:func:`nullable`), ``default``, ``read_only``, ``label`` as
``title`` and ``help_text`` as ``description``. A decimal input takes a JSON number or a
plain decimal string (:func:`decimal_schema`); a decimal output is DRF's string.

Unknown field classes map as their closest DRF base class (a project's ``CharField``
subclass is a string); one the mapper cannot place is a string, as drf-spectacular
defaults it. The shape follows drf-spectacular's defaults, so the catalog and the
OpenAPI document describe an input alike.
"""

from __future__ import annotations

import datetime
import inspect
import re
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import cached_property
from typing import Any

from django.core import validators
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from rest_framework import serializers
from rest_framework.settings import api_settings
from rest_framework.utils.model_meta import get_field_info

from affordances.vocabulary import field_schema, key_schema

__all__ = [
    "ANNOTATIONS",
    "DECIMAL_RULE",
    "FORMATS",
    "PLAIN_DECIMAL",
    "SchemaError",
    "add_text_rules",
    "argument_fields",
    "decimal_pattern",
    "decimal_schema",
    "field_annotations",
    "nullable",
    "related_queryset",
    "related_schema",
    "serializer_field_schema",
    "serializer_schema",
    "text_rules",
]

Field = serializers.Field[Any, Any, Any, Any]


class SchemaError(Exception):
    """A serializer that cannot be described as JSON Schema."""


#: Keywords that describe a value rather than constrain it: they stay outside ``anyOf``.
ANNOTATIONS = ("title", "description", "default", "examples", "readOnly", "writeOnly")

#: The formats JSON Schema 2020-12 defines (its format vocabulary); no other is written.
FORMATS = frozenset(
    {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
        "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
        "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
    }
)  # fmt: skip


def serializer_schema(
    serializer: type[serializers.Serializer[Any]] | serializers.Serializer[Any], *, direction: str
) -> dict[str, Any]:
    """The JSON Schema 2020-12 of a serializer's data in one direction: ``request`` (what
    a caller sends: unknown properties refused) or ``response`` (what it is answered)."""
    instance = serializer() if isinstance(serializer, type) else serializer
    try:
        schema = _object(instance, direction)
    except Exception as exc:  # a project's field that cannot be read without a request
        raise SchemaError(f"{type(instance).__name__}: {exc}") from exc
    # The class docstring describes code, not data; the operation carries the prose.
    schema.pop("description", None)
    if direction == "request":
        schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    return schema


def serializer_field_schema(field: Field, direction: str) -> dict[str, Any]:
    """One field's JSON Schema in one direction, as :func:`serializer_schema` states it
    among its serializer's properties (validators, the text and decimal rules)."""
    schema = _with_validators(field, _field(field, direction))
    return _request_rules(field, schema) if direction == "request" else schema


# --- objects ----------------------------------------------------------------------------


def _object(serializer: serializers.Serializer[Any], direction: str) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: set[str] = set()
    for name, field in serializer.fields.items():
        if isinstance(field, serializers.HiddenField):
            continue  # its default fills it (CurrentUserDefault): no caller sends it
        properties[name] = serializer_field_schema(field, direction)
        # A read-only field is always in a representation (drf-spectacular's default),
        # never in what a caller must send: DRF ignores it in input.
        if field.required or (field.read_only and direction == "response"):
            required.add(name)
    schema: dict[str, Any] = {"type": "object"}
    # The class's own docstring (not one inherited from DRF's classes).
    description = inspect.cleandoc(type(serializer).__dict__.get("__doc__") or "")
    if description:
        schema["description"] = description
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = sorted(required)
    return schema


# --- one field --------------------------------------------------------------------------


def field_annotations(field: Field) -> dict[str, Any]:
    """What the field says about its value beside its type: ``readOnly``, ``writeOnly``,
    ``default`` (as the field represents it), ``title`` (a ``label`` that is more than
    its name) and ``description`` (its ``help_text``)."""
    return _meta(field)


def _meta(field: Field) -> dict[str, Any]:
    """What the field says about its value beside its type."""
    meta: dict[str, Any] = {}
    if field.read_only:
        meta["readOnly"] = True
    if field.write_only:
        meta["writeOnly"] = True
    default = field.default
    if default is not None and default is not serializers.empty and not callable(default):
        if not isinstance(field, _RAW_DEFAULTS):
            try:
                default = field.to_representation(default)
            except Exception:  # a default the field cannot represent: as declared
                default = field.default
        meta["default"] = list(default) if isinstance(default, set) else default
    if field.label and not _same_words(str(field.label), field.field_name):
        meta["title"] = str(field.label)
    if field.help_text:
        meta["description"] = str(field.help_text)
    return meta


# Fields whose default is an object or a model instance, not a value to represent.
_RAW_DEFAULTS = (
    serializers.ModelField,
    serializers.SerializerMethodField,
    serializers.PrimaryKeyRelatedField,
    serializers.SlugRelatedField,
)


def _same_words(a: str, b: str | None) -> bool:
    """``"Due date"`` and ``due_date`` say the same: no title for a label that only
    repeats the field's name."""

    def words(text: str | None) -> str:
        return (text or "").strip().lower().replace(" ", "_").replace("-", "_")

    return words(a) == words(b)


def _field(field: Field, direction: str) -> dict[str, Any]:
    """The field's schema before its validators: its kind and its meta, ``null`` added
    where it takes it."""
    meta = _meta(field)
    schema = _kind(field, direction, meta)
    schema = {**schema, **meta}
    return nullable(schema) if field.allow_null else schema


def _kind(field: Field, direction: str, meta: dict[str, Any]) -> dict[str, Any]:
    """What kind of value the field holds (``meta``: a choice's list joins its prose)."""
    if isinstance(field, serializers.ListSerializer):
        return _list_of(field.child, direction)
    if isinstance(field, serializers.Serializer):
        return _object(field, direction)
    if isinstance(field, serializers.ManyRelatedField):
        item = _field(field.child_relation, direction)
        item.pop("readOnly", None)
        item.pop("default", None)
        if meta.get("description") == item.get("description"):
            item.pop("description", None)
        return {"type": "array", "items": item}
    if isinstance(field, serializers.PrimaryKeyRelatedField | serializers.SlugRelatedField):
        return _related(field, direction)
    if isinstance(field, serializers.StringRelatedField):
        return {"type": "string"}
    if isinstance(field, serializers.HyperlinkedRelatedField):  # the identity field too
        return {"type": "string", "format": "uri"}
    if isinstance(field, serializers.MultipleChoiceField):
        return {"type": "array", "items": _choices(field)}
    if isinstance(field, serializers.ChoiceField):
        choice = _choices(field)
        if "description" in meta:
            meta["description"] = f"{meta['description']}\n\n{choice.pop('description')}"
        return choice
    if isinstance(field, serializers.ListField):
        return _list_field(field, direction)
    for kind, schema in _SIMPLE:
        if isinstance(field, kind):
            return dict(schema)
    if isinstance(field, serializers.IPAddressField):
        protocol = str(field.protocol).lower()
        address = {"ipv4": "ipv4", "ipv6": "ipv6"}.get(protocol)
        return {"type": "string", "format": address} if address else {"type": "string"}
    if isinstance(field, serializers.DecimalField):
        return _decimal_output(field)
    if isinstance(field, serializers.FloatField):
        return _bounded({"type": "number"}, field)
    if isinstance(field, serializers.IntegerField):
        return _bounded({"type": "integer"}, field)
    if isinstance(field, serializers.FileField):
        return {"type": "string", "format": "uri"} if _file_url(field) else {"type": "string"}
    if isinstance(field, serializers.SerializerMethodField):
        method = getattr(field.parent, field.method_name, None)
        return _hinted(method) if method is not None else {"type": "string"}
    if isinstance(field, serializers.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, serializers.JSONField):
        return {}
    if isinstance(field, serializers.DictField | serializers.HStoreField):
        return _dict_field(field, direction)
    if isinstance(field, serializers.CharField):
        return {"type": "string"}
    if isinstance(field, serializers.ReadOnlyField):
        return _read_only(field, direction)
    if isinstance(field, serializers.ModelField):
        return _model_field(field.model_field, direction)
    return {"type": "string"}


# Field classes whose schema is fixed (subclasses before their bases: an EmailField is a
# CharField, a DateTimeField no DateField).
_SIMPLE: tuple[tuple[type[Any], dict[str, Any]], ...] = (
    (serializers.DateTimeField, {"type": "string", "format": "date-time"}),
    (serializers.DateField, {"type": "string", "format": "date"}),
    (serializers.TimeField, {"type": "string", "format": "time"}),
    (serializers.EmailField, {"type": "string", "format": "email"}),
    (serializers.URLField, {"type": "string", "format": "uri"}),
    (serializers.UUIDField, {"type": "string", "format": "uuid"}),
    (serializers.DurationField, {"type": "string"}),
)


def _file_url(field: Any) -> bool:
    return bool(getattr(field, "use_url", api_settings.UPLOADED_FILES_USE_URL))


def _choices(field: serializers.ChoiceField) -> dict[str, Any]:
    """``enum`` of the field's values (``""`` with ``allow_blank``, ``null`` with
    ``allow_null``), typed when they share one JSON type; the choices and their labels
    listed in the description."""
    values = list(dict.fromkeys(field.choices))
    if field.allow_blank and "" not in values:
        values.append("")
    kind = _enum_type(values)
    if field.allow_null and None not in values:
        values.append(None)
    schema: dict[str, Any] = {"enum": values}
    if kind:
        schema["type"] = kind
    schema["description"] = "\n".join(
        f"* `{value}` - {label}" for value, label in field.choices.items()
    )
    return schema


def _enum_type(values: list[Any]) -> str | None:
    if not values:
        return None
    if all(isinstance(value, bool) for value in values):
        return "boolean"
    if all(isinstance(value, int) for value in values):
        return "integer"
    if all(isinstance(value, int | float | Decimal) for value in values):
        return "number"
    if all(isinstance(value, str) for value in values):
        return "string"
    return None


def _list_of(child: Any, direction: str) -> dict[str, Any]:
    if isinstance(child, serializers.ListSerializer):
        return {"type": "array", "items": _list_of(child.child, direction)}
    if isinstance(child, serializers.Serializer):
        return {"type": "array", "items": _object(child, direction)}
    return {"type": "array", "items": _field(child, direction)}


def _list_field(field: serializers.ListField, direction: str) -> dict[str, Any]:
    child: Any = field.child
    if type(child).__name__ == "_UnvalidatedField":  # ListField() without a child: anything
        return {"type": "array", "items": {}}
    if isinstance(child, serializers.Serializer) and not isinstance(
        child, serializers.ListSerializer
    ):
        return {"type": "array", "items": _object(child, direction)}
    item = _with_validators(child, _field(child, direction))
    if _same_words(str(item.get("title", "")), field.field_name):
        item.pop("title", None)
    return {"type": "array", "items": item}


def _dict_field(field: Any, direction: str) -> dict[str, Any]:
    child = field.child
    if type(child).__name__ == "_UnvalidatedField":
        return {"type": "object", "additionalProperties": {}}
    value = _with_validators(child, _field(child, direction))
    return {"type": "object", "additionalProperties": value}


def _bounded(schema: dict[str, Any], field: Any) -> dict[str, Any]:
    """A number's declared bounds (its validators are read later: the tighter wins)."""
    if field.max_value is not None:
        schema["maximum"] = field.max_value
    if field.min_value is not None:
        schema["minimum"] = field.min_value
    return schema


def _decimal_output(field: serializers.DecimalField) -> dict[str, Any]:
    """A decimal as DRF writes it: a string (``COERCE_DECIMAL_TO_STRING``) matching the
    field's digits, or a number within them. An input's is :func:`decimal_schema`."""
    whole = field.max_whole_digits
    if getattr(field, "coerce_to_string", api_settings.COERCE_DECIMAL_TO_STRING):
        schema: dict[str, Any] = {"type": "string"}
        if whole is not None:
            # The separator a localized field writes is the locale's: only "." is stated.
            pattern = r"^-?0?" if whole == 0 else rf"^-?\d{{0,{whole}}}"
            schema["pattern"] = pattern + rf"(?:\.\d{{0,{field.decimal_places}}})?$"
        return schema
    number: dict[str, Any] = {"type": "number"}
    if field.max_value is not None:
        number["maximum"] = field.max_value
    elif whole is not None:
        number["exclusiveMaximum"] = 10**whole
    if field.min_value is not None:
        number["minimum"] = field.min_value
    elif whole is not None:
        number["exclusiveMinimum"] = -(10**whole)
    return number


# --- related fields, read-only fields and model fields ----------------------------------


def _related(field: Any, direction: str) -> dict[str, Any]:
    """A key or slug, by the model field it names: what a related field holds."""
    is_slug = isinstance(field, serializers.SlugRelatedField)
    if not is_slug and getattr(field, "pk_field", None) is not None:
        return _field(field.pk_field, direction)
    queryset = getattr(field, "queryset", None)
    if queryset is not None:
        model = queryset.model
        target: Any = (
            _follow(model, [field.slug_field], models.TextField()) if is_slug else model._meta.pk
        )
    else:
        parent = field.parent
        if isinstance(parent, serializers.ManyRelatedField):
            model = _meta_model(parent.parent)
            source = str(parent.source).split(".")
        else:
            model = _meta_model(parent)
            source = field.source.split(".")
        if model is None:
            return {"type": "string"}  # no model to read the key's type from
        target = _follow(model, [*source, field.slug_field] if is_slug else source)
    if isinstance(target, models.Field):
        schema = _model_field(target, direction)
    else:
        schema = _hinted(target) if callable(target) else {"type": "string"}
    # A key is read-only on its own model, not as the value of a relation.
    schema.pop("readOnly", None)
    return schema


def _meta_model(serializer: Any) -> type[models.Model] | None:
    return getattr(getattr(serializer, "Meta", None), "model", None)


def _follow(model: Any, path: list[str], default: Any = None) -> Any:
    """The model field (a relation: the field it points to) or the property, method or
    cached property at the end of a ``source`` path; ``default`` if none is there."""
    try:
        for part in path[:-1]:
            model = model._meta.get_field(part).related_model
        last = path[-1]
        attribute = getattr(model, last, None)
        if isinstance(attribute, property):
            return attribute.fget
        if isinstance(attribute, cached_property):
            return attribute.func
        try:
            found: Any = model._meta.get_field(last)
        except FieldDoesNotExist:
            return attribute if callable(attribute) else default
        return found.target_field if found.is_relation else found
    except (AttributeError, FieldDoesNotExist):
        return default


def _read_only(field: serializers.ReadOnlyField, direction: str) -> dict[str, Any]:
    parent = field.parent
    if isinstance(parent, serializers.ListSerializer):
        model, source = _meta_model(parent.parent), parent.source_attrs
    else:
        model, source = _meta_model(parent), field.source_attrs
    if model is None:
        return {"type": "string"}
    target = _follow(model, list(source))
    if _is_display(target):
        return {"type": "string"}
    if isinstance(target, models.Field):
        return _model_field(target, direction)
    return _hinted(target) if callable(target) else {"type": "string"}


def _is_display(target: Any) -> bool:
    """``get_<field>_display``: a choice's label, text."""
    for name in ("_partialmethod", "__partialmethod__"):
        partial = getattr(target, name, None)
        if partial is not None and partial.func.__name__ == "_get_FIELD_display":
            return True
    return False


def _model_field(model_field: Any, direction: str) -> dict[str, Any]:
    """A model field as the serializer field DRF's ``ModelSerializer`` builds for it."""
    try:
        field_class, kwargs = serializers.ModelSerializer().build_field(
            model_field.name, get_field_info(model_field.model), model_field.model, 0
        )
        field: Any = field_class(**kwargs)
        field.field_name = model_field.name
    except Exception:  # a custom model field DRF cannot build: its internal type below
        field = None
    # A relation DRF built without a queryset: the related model's, to read its key from.
    related: Any = getattr(model_field, "related_model", None)
    relation: Any = None
    if isinstance(field, serializers.ManyRelatedField):
        relation = field.child_relation
    elif isinstance(field, serializers.PrimaryKeyRelatedField):
        relation = field
    if relation is not None:
        if not relation.queryset:
            relation.queryset = related._default_manager.none()
        return _field(field, direction)
    if field is not None and not isinstance(
        field, serializers.ReadOnlyField | serializers.ModelField
    ):
        return _field(field, direction)
    if isinstance(model_field, models.ForeignKey):
        return _model_field(model_field.target_field, direction)
    if isinstance(model_field, models.JSONField):
        return {}
    if isinstance(model_field, models.BinaryField):
        return {"type": "string"}
    internal = getattr(models, model_field.get_internal_type(), None)
    mapped = serializers.ModelSerializer.serializer_field_mapping.get(internal)  # type: ignore[arg-type]
    if mapped is None:
        return {"type": "string"}
    try:
        return _field(mapped(), direction)
    except Exception:  # a mapped field that needs arguments: text, as a reader sees it
        return {"type": "string"}


_HINTS: tuple[tuple[type[Any], dict[str, Any]], ...] = (
    (bool, {"type": "boolean"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (Decimal, {"type": "number"}),
    (datetime.datetime, {"type": "string", "format": "date-time"}),
    (datetime.date, {"type": "string", "format": "date"}),
    (datetime.time, {"type": "string", "format": "time"}),
    (uuid.UUID, {"type": "string", "format": "uuid"}),
    (str, {"type": "string"}),
    (dict, {"type": "object", "additionalProperties": {}}),
)


def _hinted(function: Callable[..., Any] | Any) -> dict[str, Any]:
    """The value a method or property returns, from its return annotation; text when it
    has none the mapper reads."""
    try:
        hint = typing.get_type_hints(function).get("return")
    except Exception:  # an annotation naming what cannot be imported: no hint
        hint = None
    return _hint_schema(hint)


def _hint_schema(hint: Any) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    arguments = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if origin in (typing.Union, types.UnionType):
        if len(arguments) == 1:
            inner = _hint_schema(arguments[0])
            return nullable(inner) if type(None) in typing.get_args(hint) else inner
        return {"type": "string"}
    if origin in (list, tuple, set, frozenset):
        return {"type": "array", "items": _hint_schema(arguments[0]) if arguments else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": {}}
    if isinstance(hint, type):
        for kind, schema in _HINTS:
            if issubclass(hint, kind):
                return dict(schema)
    return {"type": "string"}


# --- validators -------------------------------------------------------------------------


def _with_validators(field: Field, schema: dict[str, Any]) -> dict[str, Any]:
    """The field's Django validators as keywords (the tighter bound wins), on the branch
    of ``schema`` that is not ``null``: a regex as ``pattern``, lengths, value bounds, a
    decimal validator's digits. A format or pattern on a field that also takes ``""``
    becomes a choice between the two."""
    target, outer = _value_branch(schema)
    kind = target.get("type")
    for validator in field.validators:
        if kind == "string":
            _string_validator(validator, target)
        elif kind in ("integer", "number"):
            _number_validator(validator, target)
        elif kind in ("array", "object") and isinstance(
            validator, validators.MaxLengthValidator | validators.MinLengthValidator
        ):
            upper = isinstance(validator, validators.MaxLengthValidator)
            key = ("max" if upper else "min") + ("Items" if kind == "array" else "Properties")
            _tighten(target, key, _limit(validator), upper)
    if (
        getattr(field, "allow_blank", False)
        and kind == "string"
        and any(key in target for key in ("format", "pattern", "minLength"))
    ):
        kept = {key: target.pop(key) for key in list(target) if key in _BLANK_OUTSIDE}
        inner = dict(target)
        target.clear()
        target.update({**kept, "oneOf": [inner, {"type": "string", "maxLength": 0}]})
    return outer


# What stays outside the choice between a value and "" (the rest is the value's).
_BLANK_OUTSIDE = ("readOnly", "writeOnly", "deprecated", "description", "title")


def _value_branch(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the branch holding the value's keywords, the schema): a nullable schema's first
    ``anyOf`` branch (:func:`nullable`), else the schema itself."""
    branches = schema.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and branches[1] == {"type": "null"}:
        return branches[0], schema
    return schema, schema


def _limit(validator: Any) -> Any:
    value = validator.limit_value
    return value() if callable(value) else value


def _tighten(schema: dict[str, Any], key: str, value: Any, upper: bool) -> None:
    current = schema.get(key)
    schema[key] = value if current is None else (min if upper else max)(current, value)


def _string_validator(validator: Any, schema: dict[str, Any]) -> None:
    if isinstance(validator, validators.EmailValidator):
        schema.setdefault("format", "email")
    elif isinstance(validator, validators.URLValidator):
        schema.setdefault("format", "uri")
    elif isinstance(validator, validators.RegexValidator):
        if "pattern" not in schema:
            regex: Any = validator.regex  # compiled by the validator's __init__
            schema["pattern"] = _ecma_pattern(str(regex.pattern))
    elif isinstance(validator, validators.MaxLengthValidator):
        _tighten(schema, "maxLength", _limit(validator), upper=True)
    elif isinstance(validator, validators.MinLengthValidator):
        _tighten(schema, "minLength", _limit(validator), upper=False)
    elif isinstance(validator, validators.FileExtensionValidator):
        extensions = validator.allowed_extensions
        if extensions and "pattern" not in schema:
            schema["pattern"] = f"(?:{'|'.join(re.escape(ext) for ext in extensions)})$"


def _ecma_pattern(pattern: str) -> str:
    """A Python pattern as ECMA-262 reads it: non-ASCII escaped as ``\\u00XX``/``\\uXXXX``
    and ``\\A``/``\\Z`` as ``^``/``$``."""
    escaped = pattern.encode("ascii", "backslashreplace").decode().replace(r"\x", r"\u00")
    return escaped.replace(r"\Z", "$").replace(r"\A", "^")


def _number_validator(validator: Any, schema: dict[str, Any]) -> None:
    """Value bounds, inclusive; a decimal validator's digits as exclusive bounds (what
    the tighter of an inclusive and an exclusive bound is, each kept as written)."""
    if isinstance(validator, validators.MaxValueValidator):
        _bound(schema, "maximum", _limit(validator), upper=True, exclusive=False)
    elif isinstance(validator, validators.MinValueValidator):
        _bound(schema, "minimum", _limit(validator), upper=False, exclusive=False)
    elif isinstance(validator, validators.DecimalValidator) and validator.max_digits:
        value = 10 ** (validator.max_digits - (validator.decimal_places or 0))
        _bound(schema, "maximum", value, upper=True, exclusive=True)
        _bound(schema, "minimum", -value, upper=False, exclusive=True)


def _bound(schema: dict[str, Any], key: str, value: Any, *, upper: bool, exclusive: bool) -> None:
    """Tighten ``maximum``/``minimum`` (or its exclusive keyword) with ``value``, in place
    (a bound keeps its place among the keywords): the tighter wins; an exclusive bound
    that tightens nothing leaves the current one as it is (drf-spectacular's rule, so
    the catalog and the OpenAPI document agree)."""
    strict = "exclusiveMaximum" if upper else "exclusiveMinimum"
    held = strict if strict in schema else key if key in schema else None
    if held is None:
        schema[strict if exclusive else key] = value
        return
    tighter = (min if upper else max)(schema[held], value)
    if exclusive and tighter == schema[held]:
        return
    wanted = strict if exclusive else key
    if wanted != held:
        del schema[held]
    schema[wanted] = tighter


# --- inputs: what DRF enforces beyond the mapping -----------------------------------------


def _request_rules(field: Field, schema: dict[str, Any]) -> dict[str, Any]:
    """An input's schema with what the server enforces and a plain mapping leaves out: a
    related input's key (:func:`related_schema`), the decimal rule (:func:`decimal_schema`)
    and a ``CharField``'s text rules (:func:`add_text_rules`)."""
    related = related_schema(field)
    if related is not None:
        notes = {key: schema[key] for key in ANNOTATIONS if key in schema}
        return {**notes, **related}
    if isinstance(field, serializers.DecimalField):
        return decimal_schema(field, schema)
    add_text_rules(field, schema)
    return schema


def argument_fields(serializer: serializers.Serializer[Any]) -> dict[str, Any]:
    """The fields a caller sends: not a ``HiddenField`` (its default fills it, such as
    ``CurrentUserDefault``) nor a read-only one, both of which DRF ignores in input."""
    return {
        name: field
        for name, field in serializer.fields.items()
        if not field.read_only and not isinstance(field, serializers.HiddenField)
    }


# What ``str.strip()`` removes (``str.isspace``, Python's ``\s``), spelled out: ECMA-262's
# ``\s`` is another set, and a pattern is read by both.
_WHITESPACE = (
    r"\t\n\u000b\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
)
_NO_NUL = r"^[^\u0000]*$"
# Whitespace first, then one character that is neither whitespace nor NUL, then anything
# but NUL: the classes of the two repeats are disjoint, so a backtracking engine (Python's,
# an ECMAScript client's) matches in linear time. ``^[^\0]*[^\s\0][^\0]*$``, which
# means the same, is quadratic: both repeats can take every letter.
_NOT_BLANK = rf"^[{_WHITESPACE}]*[^{_WHITESPACE}\u0000][^\u0000]*$"


def text_rules(field: Field) -> dict[str, Any]:
    """What a writable DRF ``CharField`` refuses beyond its validators, as JSON Schema.

    Every ``CharField`` refuses NUL characters; without ``allow_blank`` it refuses ``""``
    and, trimming whitespace, a string of whitespace alone.
    """
    if not isinstance(field, serializers.CharField) or field.read_only:
        return {}
    if field.allow_blank:
        return {"pattern": _NO_NUL}
    return {"minLength": 1, "pattern": _NOT_BLANK if field.trim_whitespace else _NO_NUL}


def add_text_rules(field: Field, schema: dict[str, Any]) -> None:
    """Merge :func:`text_rules` into a string field's schema (in place). A field's own
    ``pattern`` (a RegexValidator) is kept: it already says what the field takes."""
    rules = text_rules(field)
    branches = [schema, *schema.get("anyOf", [])]  # a nullable field: its string branch
    target = next((b for b in branches if b.get("type") == "string" and "enum" not in b), None)
    if not rules or target is None:
        return
    if "minLength" in rules:
        target["minLength"] = max(int(target.get("minLength", 0)), rules["minLength"])
    target.setdefault("pattern", rules["pattern"])


# --- the decimal rule ---------------------------------------------------------------------

# What a decimal input takes, on every face (docs/protocol.md#execution): a JSON number,
# or a plain ASCII decimal string — an optional "-", ASCII digits, optionally "." and
# ASCII digits. Not an exponent, "+", "_", spaces or non-ASCII digits, all of which
# Python's Decimal (and so DRF) would read: "1e1", "1_0", " 10" and "\u0661\u0660"
# (Arabic-Indic) are all 10 to it.
PLAIN_DECIMAL = r"-?[0-9]+(?:\.[0-9]+)?"
DECIMAL_RULE = 'A JSON number, or a plain decimal string such as "12.50".'


def decimal_schema(
    field: serializers.DecimalField, mapped: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The one schema of a decimal input (the catalog's, MCP's, OpenAPI's; HAL-FORMS
    shows its parts): ``anyOf`` a JSON number within the field's digits and bounds, its
    precision as ``multipleOf``, and a string of the plain decimals the field takes
    (:func:`decimal_pattern`). ``mapped``: the field's schema as mapped, for its prose."""
    mapped = mapped or {}
    annotations = {key: mapped[key] for key in ANNOTATIONS if key in mapped}
    number: dict[str, Any] = {"type": "number"}
    if field.decimal_places is not None:
        number["multipleOf"] = Decimal(1).scaleb(-field.decimal_places)
    whole = _whole_digits(field)
    if field.max_value is not None:
        number["maximum"] = Decimal(field.max_value)
    elif whole is not None:
        number["exclusiveMaximum"] = Decimal(10) ** whole
    if field.min_value is not None:
        number["minimum"] = Decimal(field.min_value)
    elif whole is not None:
        number["exclusiveMinimum"] = -(Decimal(10) ** whole)
    text = {"type": "string", "pattern": decimal_pattern(field)}
    branches: list[dict[str, Any]] = [number, text]
    if field.allow_null:
        branches.append({"type": "null"})
    return {**annotations, "anyOf": branches}


def _whole_digits(field: serializers.DecimalField) -> int | None:
    if field.max_digits is not None and field.decimal_places is not None:
        return int(field.max_digits) - int(field.decimal_places)
    return field.max_whole_digits


def decimal_pattern(field: serializers.DecimalField) -> str:
    """The plain decimal strings (:data:`PLAIN_DECIMAL`) the field takes: at most its
    whole digits before the point (leading zeros aside) and its decimal places after it.
    A lower bound of 0 or more drops the sign; one of exactly one unit of the last place
    also refuses zero. Other bounds only the number states: a pattern cannot compare
    values. Linear in a backtracking engine (``affordances.E017`` measures it)."""
    minimum = field.min_value
    places = field.decimal_places
    whole = _whole_digits(field)
    sign = "" if minimum is not None and minimum >= 0 else "-?"
    digits = f"0*[0-9]{{1,{whole}}}" if whole is not None else "[0-9]+"
    fraction = (
        f"(?:\\.[0-9]{{1,{places}}})?" if places else ("" if places == 0 else "(?:\\.[0-9]+)?")
    )
    smallest = Decimal(1).scaleb(-places) if places is not None else None
    positive = minimum is not None and smallest is not None and Decimal(minimum) == smallest
    not_zero = "(?!0*(?:\\.0*)?$)" if positive else ""
    return f"^{not_zero}{sign}{digits}{fraction}$"


# --- related inputs -----------------------------------------------------------------------


def related_schema(field: Field) -> dict[str, Any] | None:
    """The JSON Schema of a related field of an input serializer, or None if ``field``
    is none: a ``PrimaryKeyRelatedField`` takes the related model's key
    (:func:`key_schema`), a ``SlugRelatedField`` its slug field's value, ``many=True``
    an array of them; ``allow_null`` adds ``null``."""
    many = isinstance(field, serializers.ManyRelatedField)
    related: Any = field.child_relation if many else field  # type: ignore[attr-defined]
    if not isinstance(related, serializers.RelatedField):
        return None
    queryset = related_queryset(related)
    if queryset is None:
        return None
    if isinstance(related, serializers.SlugRelatedField):
        try:
            lookup = queryset.model._meta.get_field(related.slug_field)
        except FieldDoesNotExist:
            return None
        one = field_schema(lookup)
    elif isinstance(related, serializers.PrimaryKeyRelatedField):
        one = key_schema(queryset.model)
    else:
        return None
    if many:
        items: dict[str, Any] = {"type": "array", "items": one}
        if not field.allow_empty:  # type: ignore[attr-defined]
            items["minItems"] = 1
        return nullable(items) if field.allow_null else items
    return nullable(one) if related.allow_null else one


def related_queryset(
    related: serializers.RelatedField[Any, Any, Any],
) -> models.QuerySet[Any] | None:
    """What a related field looks its values up in, read as DRF reads it: through the
    field's own ``get_queryset()`` (a subclass's override, DRF's way to a lazy or
    per-request queryset, sees the serializer's context). An override that cannot answer
    as it stands (it needs the request, and the catalog is built without one) leaves the
    field's declared ``queryset``, if any. None: no queryset of a model."""
    queryset: Any
    try:
        queryset = related.get_queryset()
    except Exception:  # the project's code, whatever it raises: its declared queryset
        queryset = getattr(related, "queryset", None)
    if isinstance(queryset, models.Manager):
        queryset = queryset.all()
    return queryset if isinstance(queryset, models.QuerySet) else None


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``, as ``anyOf`` branches of one ``type`` each.

    Not ``"type": ["string", "null"]``: legal JSON Schema, but clients that map tool
    schemas onto a one-type dialect (Gemini's OpenAPI subset) drop or refuse it; the MCP
    Inspector's portability check warns about it.
    """
    annotations = {key: schema[key] for key in ANNOTATIONS if key in schema}
    branch = {key: value for key, value in schema.items() if key not in annotations}
    return {**annotations, "anyOf": [branch, {"type": "null"}]}
