"""The few values every face spells alike, decided once: the JSON Schema dialect, the
largest key or version (a bigint), an object's key and an expected version — each
with its one schema and its one parser, which the catalog, MCP, REST, HAL-FORMS,
OpenAPI and the admin all use.

An object's key is read from the model's key field, followed through relations to
the field that holds the value: a multi-table-inheritance child's key is its
``parent_link`` ``OneToOneField``, whose values are the parent's keys.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from affordances.problems import Problem

__all__ = [
    "DIALECT",
    "MAX_BIGINT",
    "VERSION_RULE",
    "VERSION_STRING",
    "field_schema",
    "is_integer_key",
    "key_field",
    "key_schema",
    "parse_key",
    "parse_version",
    "version_schema",
]

#: The JSON Schema dialect of every schema the library writes.
DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The largest key or version a database's ``bigint`` holds: past it, a database
#: raises rather than finding nothing.
MAX_BIGINT = 2**63 - 1


# --- keys ------------------------------------------------------------------------------


def _value_field(field: Any) -> Any:
    """The field holding the value of ``field``: a relation's target, followed."""
    while field is not None and field.is_relation:
        field = field.target_field
    return field


def key_field(model: type[models.Model]) -> models.Field[Any, Any]:
    """The field whose values are ``model``'s keys: its primary key, or what that key
    points to (a multi-table-inheritance child: the parent's key)."""
    field = _value_field(model._meta.pk)
    assert field is not None
    return field  # type: ignore[no-any-return]


def _is_integer(field: Any) -> bool:
    # AutoField, BigAutoField and SmallAutoField are IntegerFields.
    return isinstance(field, models.AutoField | models.IntegerField)


def is_integer_key(model: type[models.Model]) -> bool:
    return _is_integer(key_field(model))


def field_schema(field: Any) -> dict[str, Any]:
    """A model field's value as an argument naming a row (a key or a slug), a relation
    read as the field it points to: an integer from 1, a UUID, or text no longer than
    the field."""
    field = _value_field(field)
    if _is_integer(field):
        # Beyond a bigint is refused as not_found when parsed (parse_key).
        return {"type": "integer", "minimum": 1}
    if isinstance(field, models.UUIDField):
        return {"type": "string", "format": "uuid"}
    schema: dict[str, Any] = {"type": "string", "minLength": 1}
    limit = getattr(field, "max_length", None)
    if limit is not None:
        schema["maxLength"] = limit
    return schema


def key_schema(model: type[models.Model]) -> dict[str, Any]:
    """The JSON Schema of ``model``'s key as an argument (an ``{resource}Id``, a related
    input, a model-choice filter)."""
    return field_schema(key_field(model))


# What no key holds: C0 controls and DEL (PostgreSQL refuses a NUL in text).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Longer text is no key of any field a database indexes; not worth parsing.
_MAX_KEY_TEXT = 1024


def parse_key(model: type[models.Model], value: Any) -> Any:
    """A key of ``model`` from a URL or JSON (or in its Python type), or ``not_found`` —
    never a database error, whatever the key field.

    Only the canonical spelling of an integer key names an object (``"1"`` from a URL,
    ``1`` from JSON; not ``" 1"``, ``"01"``, ``1.5`` or ``True``); beyond a bigint the
    database would raise instead of finding nothing. Other keys are read by the key
    field's own ``to_python`` (a ``UUIDField`` takes a ``uuid.UUID`` or its hyphenated
    text, in either case); text with control characters (a NUL cannot reach
    PostgreSQL) or longer than the field is no key.
    """
    field = key_field(model)
    if _is_integer(field):
        return _integer_key(value)
    if isinstance(value, bool) or value is None or value == "":
        raise Problem.not_found()
    if isinstance(value, str) and (_CONTROL.search(value) or len(value) > _MAX_KEY_TEXT):
        raise Problem.not_found()
    try:
        key = field.to_python(value)
    except (ValidationError, TypeError, ValueError, OverflowError):
        raise Problem.not_found() from None
    if isinstance(field, models.UUIDField):
        # One spelling per object: the hyphenated form (not braces, URNs or bare hex).
        if isinstance(value, str) and str(key) != value.lower():
            raise Problem.not_found()
        return key
    if isinstance(key, str):
        limit = getattr(field, "max_length", None)
        if key == "" or (limit is not None and len(key) > limit):
            raise Problem.not_found()
    return key


def _integer_key(value: Any) -> int:
    if isinstance(value, bool):
        raise Problem.not_found()
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON Schema's integer: 1.0 is 1
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
        if str(number) != value:
            raise Problem.not_found()
    else:
        raise Problem.not_found()
    if not 1 <= number <= MAX_BIGINT:
        raise Problem.not_found()
    return number


# --- expected versions -----------------------------------------------------------------


def _at_most(limit: int) -> str:
    """A regular expression for the decimal numbers from 1 to ``limit``, leading zeros
    allowed: shorter numbers, then each digit below the limit's at each position."""
    digits = str(limit)
    size = len(digits)
    branches = [f"[1-9][0-9]{{0,{size - 2}}}"] if size > 1 else []
    for position, digit in enumerate(digits):
        low = "1" if position == 0 else "0"
        if int(digit) > int(low):
            rest = size - position - 1
            tail = f"[0-9]{{{rest}}}" if rest else ""
            branches.append(f"{digits[:position]}[{low}-{int(digit) - 1}]{tail}")
    branches.append(digits)
    return "0*(?:" + "|".join(branches) + ")"


#: A version sent as a string — what HAL-FORMS' hidden value and HTML forms can only
#: send, and so taken on every face: plain ASCII digits, no sign, space or "*"
#: (If-Match has its own syntax), from 1 to a bigint.
VERSION_STRING = _at_most(MAX_BIGINT)
_VERSION_STRING = re.compile(VERSION_STRING)
VERSION_RULE = 'An integer version, or its plain digits as a string ("3").'


def version_schema(description: str) -> dict[str, Any]:
    """The one schema of ``expectedVersion`` (the catalog's, MCP's, OpenAPI's, the
    protocol's): an integer from 1 to a bigint, or the same number as plain digits."""
    return {
        "description": description,
        "anyOf": [
            {"type": "integer", "minimum": 1, "maximum": MAX_BIGINT},
            {"type": "string", "pattern": f"^{VERSION_STRING}$"},
        ],
    }


def parse_version(value: Any, *, name: str = "expectedVersion") -> int | None:
    """An expected version from JSON (an integer, or its digits as a string) or a form
    (a string); None if none was sent. The parser of :func:`version_schema`."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise Problem.validation({name: [VERSION_RULE]})
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _VERSION_STRING.fullmatch(value):
        number = int(value)
    else:
        raise Problem.validation({name: [VERSION_RULE]})
    if not 1 <= number <= MAX_BIGINT:
        raise Problem.validation({name: ["Must be a positive version."]})
    return number
