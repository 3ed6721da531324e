"""DRF serializers as JSON Schema 2020-12, and the rule that constraints only narrow.

Field mapping is drf-spectacular's (choices, regex validators, lengths, bounds,
formats); this module only turns its OpenAPI flavour into plain JSON Schema 2020-12
and maps decimals to JSON numbers with ``multipleOf`` for their precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from rest_framework import serializers

from affordances.compat import map_serializer
from affordances.patterns import backtracking_risk

__all__ = [
    "ConstraintWidens",
    "SchemaError",
    "add_text_rules",
    "assert_narrows",
    "nullable",
    "serializer_schema",
    "text_rules",
]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Keywords a constraint may use, and how each must relate to the catalog's value.
_BOUNDS_UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems")
_BOUNDS_LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems")


class SchemaError(Exception):
    """A serializer that cannot be described as JSON Schema."""


class ConstraintWidens(Exception):
    """A constraint that would admit something the catalog's schema refuses."""


def serializer_schema(
    serializer: type[serializers.Serializer] | serializers.Serializer, *, direction: str
) -> dict[str, Any]:
    """The JSON Schema 2020-12 of a serializer's data in one direction (request/response)."""
    instance = serializer() if isinstance(serializer, type) else serializer
    try:
        schema, components = map_serializer(instance, direction)
    except Exception as exc:  # spectacular raises plain errors for unmappable fields
        raise SchemaError(f"{type(instance).__name__}: {exc}") from exc
    schema = _to_json_schema(_inline_refs(schema, components))
    # The class docstring describes code, not data; the operation carries the prose.
    schema.pop("description", None)
    if direction == "request":
        # Inputs take decimals as JSON numbers (strings are accepted too at execution);
        # outputs keep DRF's decimal strings, so the response mapping stays spectacular's.
        for name, field in instance.fields.items():
            if name not in schema.get("properties", {}):
                continue
            if isinstance(field, serializers.DecimalField):
                schema["properties"][name] = _decimal_schema(field, schema["properties"][name])
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


def text_rules(field: serializers.Field) -> dict[str, Any]:
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


def add_text_rules(field: serializers.Field, schema: dict[str, Any]) -> None:
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


def _decimal_schema(field: serializers.DecimalField, mapped: Mapping[str, Any]) -> dict[str, Any]:
    """Money and other decimals travel as JSON numbers; precision is ``multipleOf``."""
    schema: dict[str, Any] = {"type": "number"}
    for key in ("title", "description", "readOnly", "writeOnly", "default"):
        if key in mapped:
            schema[key] = mapped[key]
    if field.decimal_places is not None:
        schema["multipleOf"] = Decimal(1).scaleb(-field.decimal_places)
    if field.max_value is not None:
        schema["maximum"] = Decimal(field.max_value)
    elif field.max_whole_digits is not None:
        schema["exclusiveMaximum"] = Decimal(10) ** field.max_whole_digits
    if field.min_value is not None:
        schema["minimum"] = Decimal(field.min_value)
    elif field.max_whole_digits is not None:
        schema["exclusiveMinimum"] = -(Decimal(10) ** field.max_whole_digits)
    return nullable(schema) if field.allow_null else schema


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


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` or ``null``, as ``anyOf`` branches of one ``type`` each.

    Not ``"type": ["string", "null"]``: legal JSON Schema, but clients that map tool
    schemas onto a one-type dialect (Gemini's OpenAPI subset) drop or refuse it; the MCP
    Inspector's portability check warns about it.
    """
    annotations = {key: schema[key] for key in _ANNOTATIONS if key in schema}
    branch = {key: value for key, value in schema.items() if key not in annotations}
    return {**annotations, "anyOf": [branch, {"type": "null"}]}


def assert_narrows(base: Mapping[str, Any], constraint: Mapping[str, Any]) -> None:
    """Refuse a constraint that could admit a value the base schema refuses."""
    unknown = set(constraint) - {"properties", "required"}
    if unknown:
        raise ConstraintWidens(f"constraints may only use properties/required, not {unknown}")
    base_properties = base.get("properties", {})
    for name in constraint.get("required", []):
        if name not in base_properties:
            raise ConstraintWidens(f"required {name!r} is not an input of the operation")
    for name, narrowed in constraint.get("properties", {}).items():
        if name not in base_properties:
            raise ConstraintWidens(f"{name!r} is not an input of the operation")
        _assert_property_narrows(name, base_properties[name], narrowed)


def _assert_property_narrows(
    name: str, base: Mapping[str, Any], narrowed: Mapping[str, Any]
) -> None:
    for key, value in narrowed.items():
        if key == "enum":
            if "enum" in base and not set(value) <= set(base["enum"]):
                raise ConstraintWidens(f"{name}.enum adds {set(value) - set(base['enum'])}")
        elif key == "const":
            if "enum" in base and value not in base["enum"]:
                raise ConstraintWidens(f"{name}.const {value!r} is not in the catalog's enum")
        elif key in _BOUNDS_UPPER:
            if key in base and Decimal(str(value)) > Decimal(str(base[key])):
                raise ConstraintWidens(f"{name}.{key} {value} exceeds {base[key]}")
        elif key in _BOUNDS_LOWER:
            if key in base and Decimal(str(value)) < Decimal(str(base[key])):
                raise ConstraintWidens(f"{name}.{key} {value} is below {base[key]}")
        elif key == "pattern":
            # An extra pattern is applied together with the catalog's (allOf): it narrows,
            # unless it could hold a worker (and a client) on a crafted string.
            risk = backtracking_risk(value) if isinstance(value, str) else "not a string"
            if risk:
                raise ConstraintWidens(f"{name}.pattern {value!r}: {risk}")
        else:
            raise ConstraintWidens(f"{name}.{key} is not a narrowing keyword")
