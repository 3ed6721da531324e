"""DRF serializers as JSON Schema 2020-12, the decimal rule, and the constraint vocabulary.

Field mapping is drf-spectacular's (choices, regex validators, lengths, bounds,
formats); this module only turns its OpenAPI flavour into plain JSON Schema 2020-12 and
gives decimal inputs their one schema (:func:`decimal_schema`): a JSON number, or a
plain ASCII decimal string (:data:`PLAIN_DECIMAL`), on every face.

It also owns what a constraint may say (docs/protocol.md#affordances), for every face at once:
:data:`CONSTRAINT_KEYWORDS` names each keyword and the kinds of input it applies to
(:func:`input_kind`), :data:`REFUSED_KEYWORDS` the JSON Schema keywords no form could
show. :func:`assert_narrows` refuses anything else, and :func:`narrow_property` is the
one merge of an input's schema with its constraint (the tighter bound wins) that the
faces render — OpenAPI as the merged schema, the forms (:mod:`affordances.inputs`) as
inclusive bounds on the input's step, lengths, one pattern and the offered choices —
and execution enforces (:data:`SchemaValidator`).
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
from rest_framework import serializers

from affordances.compat.spectacular import map_serializer
from affordances.constraints import inclusive_bounds, outside_format_bound
from affordances.vocabulary import field_schema, key_schema

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
    "from_openapi",
    "key_schema",
    "nullable",
    "related_queryset",
    "related_schema",
    "serializer_schema",
    "takes_null",
    "text_rules",
    "tool_input_schema",
]


class SchemaError(Exception):
    """A serializer that cannot be described as JSON Schema."""


def serializer_schema(
    serializer: type[serializers.Serializer[Any]] | serializers.Serializer[Any], *, direction: str
) -> dict[str, Any]:
    """The JSON Schema 2020-12 of a serializer's data in one direction (request/response)."""
    instance = serializer() if isinstance(serializer, type) else serializer
    try:
        mapped, components = map_serializer(instance, direction)
    except Exception as exc:  # spectacular raises plain errors for unmappable fields
        raise SchemaError(f"{type(instance).__name__}: {exc}") from exc
    schema: dict[str, Any] = _to_json_schema(_inline_refs(mapped, components))
    # The class docstring describes code, not data; the operation carries the prose.
    schema.pop("description", None)
    if direction == "request":
        # Inputs take decimals as a JSON number or a plain decimal string (the decimal
        # rule); outputs keep DRF's decimal strings: the response mapping stays spectacular's.
        for name, field in instance.fields.items():
            if name not in schema.get("properties", {}):
                continue
            related = related_schema(field)
            if related is not None:
                mapped = schema["properties"][name]
                notes = {key: mapped[key] for key in _ANNOTATIONS if key in mapped}
                schema["properties"][name] = {**notes, **related}
            elif isinstance(field, serializers.DecimalField):
                schema["properties"][name] = decimal_schema(field, schema["properties"][name])
            else:
                add_text_rules(field, schema["properties"][name])
        schema["additionalProperties"] = False
    schema.setdefault("properties", {})
    return schema


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


def argument_fields(serializer: serializers.Serializer[Any]) -> dict[str, Any]:
    """The fields a caller sends: not a ``HiddenField`` (its default fills it, such as
    ``CurrentUserDefault``) nor a read-only one, both of which DRF ignores in input."""
    return {
        name: field
        for name, field in serializer.fields.items()
        if not field.read_only and not isinstance(field, serializers.HiddenField)
    }


def text_rules(field: serializers.Field[Any, Any, Any, Any]) -> dict[str, Any]:
    """What a writable DRF ``CharField`` refuses beyond its validators, as JSON Schema.

    Every ``CharField`` refuses NUL characters; without ``allow_blank`` it refuses ``""``
    and, trimming whitespace, a string of whitespace alone. drf-spectacular states none
    of it, so a client reading the schema would send what the server refuses.
    """
    if not isinstance(field, serializers.CharField) or field.read_only:
        return {}
    if field.allow_blank:
        return {"pattern": _NO_NUL}
    return {"minLength": 1, "pattern": _NOT_BLANK if field.trim_whitespace else _NO_NUL}


def add_text_rules(field: serializers.Field[Any, Any, Any, Any], schema: dict[str, Any]) -> None:
    """Merge :func:`text_rules` into a string field's mapped schema (in place). A field's
    own ``pattern`` (a RegexValidator) is kept: it already says what the field takes."""
    rules = text_rules(field)
    branches = [schema, *schema.get("anyOf", [])]  # a nullable field: its string branch
    target = next((b for b in branches if b.get("type") == "string" and "enum" not in b), None)
    if not rules or target is None:
        return
    if "minLength" in rules:
        target["minLength"] = max(int(target.get("minLength", 0)), rules["minLength"])
    target.setdefault("pattern", rules["pattern"])


# --- the decimal rule ---------------------------------------------------------------

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
    annotations = {key: mapped[key] for key in _ANNOTATIONS if key in mapped}
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


def _inline_refs(node: Any, components: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            target = components.get(ref.rsplit("/", 1)[-1])
            if target is None:
                raise SchemaError(f"Unresolvable reference {ref}")
            return _inline_refs(target, components)
        return {key: _inline_refs(value, components) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline_refs(item, components) for item in node]
    return node


def from_openapi(schema: Any) -> Any:
    """An OpenAPI 3.0 schema object as JSON Schema 2020-12 (nullable, boolean exclusives):
    what a face that writes OpenAPI narrows with :func:`narrow_property`."""
    return _to_json_schema(schema)


def _to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects → JSON Schema 2020-12 (nullable, boolean exclusives)."""
    if isinstance(node, list):
        return [_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _to_json_schema(value) for key, value in node.items()}
    if out.get("format") is not None and out["format"] not in _FORMATS:
        # OpenAPI's registry (``decimal``): unknown to JSON Schema, which ignores it (and
        # Ajv warns); the pattern and description still say what the string holds.
        out.pop("format")
    is_nullable = out.pop("nullable", False)
    for exclusive, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
        if out.get(exclusive) is True and bound in out:
            out[exclusive] = out.pop(bound)
        elif out.get(exclusive) is False:
            out.pop(exclusive)
    # drf-spectacular marks ChoiceField enums with an OpenAPI-only type hint; keep enums.
    out.pop("x-spec-enum-id", None)
    for key in ("formatMinimum", "formatMaximum"):  # the extensions OpenAPI 3.0 writes
        if f"x-{key}" in out:
            out[key] = out.pop(f"x-{key}")
    return nullable(out) if is_nullable else out


# The formats JSON Schema 2020-12 defines (its format vocabulary).
_FORMATS = frozenset(
    {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
        "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
        "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
    }
)  # fmt: skip
# Keywords that describe a value rather than constrain it: they stay outside anyOf.
_ANNOTATIONS = ("title", "description", "default", "examples", "readOnly", "writeOnly")


def related_schema(field: serializers.Field[Any, Any, Any, Any]) -> dict[str, Any] | None:
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


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``, as ``anyOf`` branches of one ``type`` each.

    Not ``"type": ["string", "null"]``: legal JSON Schema, but clients that map tool
    schemas onto a one-type dialect (Gemini's OpenAPI subset) drop or refuse it; the MCP
    Inspector's portability check warns about it.
    """
    annotations = {key: schema[key] for key in _ANNOTATIONS if key in schema}
    branch = {key: value for key, value in schema.items() if key not in annotations}
    return {**annotations, "anyOf": [branch, {"type": "null"}]}


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


# --- tool schemas as model providers take them -----------------------------------------

# What the MCP tool list leaves out of an input schema, each stated in the property's
# description instead: Gemini's function declarations (google-genai's ``Schema``, an
# OpenAPI 3.0 subset, also behind pydantic-ai's Google transformer) refuse the whole tool
# for any of them ("Extra inputs are not permitted"). None is needed for correctness:
# tools/call checks every argument against the catalog's own schema, which keeps them.
_STEP = "multipleOf"
_EXCLUSIVE = {"exclusiveMinimum": "greater than", "exclusiveMaximum": "less than"}


def tool_input_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An operation's input schema as the MCP tool list states it, for the function
    calling of model providers (docs/protocol.md#mcp). The catalog's schema, with:

    - no ``$schema``: every MCP revision reads a tool schema as JSON Schema 2020-12, and
      Gemini refuses the keyword;
    - every optional input that does not itself take ``null`` made nullable
      (:func:`nullable`): OpenAI's strict mode (langchain-core's and openai-agents'
      conversions) makes every property required, so a model sends ``null`` for what
      it would leave out — which the server takes as absent (:func:`absent_nulls
      <affordances.arguments.absent_nulls>`);
    - no ``multipleOf`` nor exclusive bound (:data:`_EXCLUSIVE`): on a number with a
      step (an integer, a decimal's ``multipleOf``) an exclusive bound becomes the
      inclusive one on that step (:func:`~affordances.constraints.inclusive_bounds`:
      below 1e10 in cents, at most 9999999999.99); the step, and an exclusive bound
      without one, are said in the property's description, as the server words them;
    - ``const`` as an ``enum`` of one (the same values; Gemini knows no ``const``).

    It only widens: every value the catalog's schema takes, it takes. A copy.
    """
    out = {key: value for key, value in schema.items() if key != "$schema"}
    required = set(out.get("required", ()))
    properties: dict[str, Any] = {}
    for name, prop in dict(out.get("properties") or {}).items():
        notes: list[str] = []
        provided = _provider_node(prop, notes)
        if notes:
            said = str(provided.get("description", "")).rstrip()
            provided["description"] = " ".join([*([said] if said else []), *notes])
        if name not in required and not takes_null(provided):
            provided = nullable(provided)
        properties[name] = provided
    out["properties"] = properties
    return out


def _provider_node(node: Any, notes: list[str]) -> Any:
    """One schema node (and the nodes under it) without the keywords providers refuse;
    what a dropped keyword said goes to ``notes``."""
    if not isinstance(node, Mapping):
        return node
    out = dict(node)
    if "const" in out:
        out["enum"] = [out.pop("const")]
    step = out.pop(_STEP, None)
    grid = _decimal_value(step) if step is not None else None
    if grid is None and out.get("type") == "integer":
        grid = Decimal(1)
    if grid is not None and any(key in out for key in _EXCLUSIVE):
        low, high = inclusive_bounds([out], grid)
        for key in ("minimum", "maximum", *_EXCLUSIVE):
            out.pop(key, None)
        if low is not None:
            out["minimum"] = low
        if high is not None:
            out["maximum"] = high
    for key, words in _EXCLUSIVE.items():
        if key in out:  # a number without a step: no inclusive bound says it exactly
            notes.append(f"Must be {words} {_plain(out.pop(key))}.")
    if step is not None:
        notes.append(f"Must be a multiple of {_plain(step)}.")
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [_provider_node(branch, notes) for branch in out[key]]
    if isinstance(out.get("items"), Mapping):
        out["items"] = _provider_node(out["items"], notes)
    return out


def _decimal_value(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _plain(value: Any) -> str:
    """A bound as a person writes it: 0.01, 10000000000 (not 1E+10)."""
    number = _decimal_value(value)
    return str(value) if number is None else format(number.normalize(), "f")


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
