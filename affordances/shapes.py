"""The shapes of the affordance lists and the JSON Schemas that describe them.

Decided once, here, below the catalog: the catalog's operations describe a
representation with :func:`list_schemas`, :mod:`affordances.entries` writes the entries
in a :class:`Shape`, and every face's schema (MCP ``outputSchema``, OpenAPI, the
protocol's published schemas) comes from these functions.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from affordances.problems import Problem

__all__ = ["AFFORDANCE_LISTS", "CATALOG_KEYS", "Shape", "list_schemas", "shaped_schema"]

AFFORDANCE_LISTS = ("affordances", "unavailableAffordances")
# What an affordance entry restates from its catalog entry; compact entries leave it out.
CATALOG_KEYS = ("operation", "title", "method", "confirmationRequired")


class Shape(StrEnum):
    FULL = "full"
    COMPACT = "compact"
    NONE = "none"

    @classmethod
    def from_param(cls, value: str | None) -> Shape:
        """``?affordances=`` → shape: absent is full, ``none`` or ``compact`` as asked;
        anything else is a ``validation_error`` (a typo must not pass for "full")."""
        if value is None:
            return cls.FULL
        if value == cls.NONE:
            return cls.NONE
        if value == cls.COMPACT:
            return cls.COMPACT
        raise Problem.validation({"affordances": ["Must be none or compact (or absent)."]})


# -- the entries' schemas ---------------------------------------------------------------

_AVAILABLE_PROPERTIES: dict[str, dict[str, Any]] = {
    "operation": {"type": "string"},
    "name": {"type": "string"},
    "title": {"type": "string"},
    "method": {"type": "string"},
    "confirmationRequired": {"type": "boolean", "const": True},
    "target": {"type": "string", "format": "uri"},
    "arguments": {"type": "object"},
    "constraints": {"type": "object"},
    "validForVersion": {"type": "integer"},
}
_AVAILABLE_REQUIRED = ("operation", "name", "method", "target", "arguments")
_UNAVAILABLE_PROPERTIES: dict[str, dict[str, Any]] = {
    "operation": {"type": "string"},
    "name": {"type": "string"},
    "reason": {"type": "string"},
}
_UNAVAILABLE_REQUIRED = ("operation", "name", "reason")


def _entry_schema(
    properties: dict[str, dict[str, Any]], required: tuple[str, ...], shape: Shape
) -> dict[str, Any]:
    kept = [key for key in properties if shape is Shape.FULL or key not in CATALOG_KEYS]
    return {
        "type": "object",
        "properties": {key: dict(properties[key]) for key in kept},
        "required": [key for key in required if key in kept],
    }


def list_schemas(shape: Shape) -> dict[str, Any]:
    """The JSON Schema of ``affordances`` and ``unavailableAffordances`` in ``shape``
    (nothing for the plain shape): the properties a representation's schema adds."""
    if shape is Shape.NONE:
        return {}
    return {
        "affordances": {
            "type": "array",
            "items": _entry_schema(_AVAILABLE_PROPERTIES, _AVAILABLE_REQUIRED, shape),
        },
        "unavailableAffordances": {
            "type": "array",
            "items": _entry_schema(_UNAVAILABLE_PROPERTIES, _UNAVAILABLE_REQUIRED, shape),
        },
    }


def shaped_schema(schema: Any, shape: Shape) -> Any:
    """A representation's schema (any depth: a page of them too) in ``shape``: wherever
    an object schema lists the affordance lists, they become ``shape``'s."""
    if isinstance(schema, list):
        return [shaped_schema(item, shape) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: shaped_schema(value, shape) for key, value in schema.items()}
    properties = result.get("properties")
    if isinstance(properties, dict) and any(name in properties for name in AFFORDANCE_LISTS):
        listed = {name: value for name, value in properties.items() if name not in AFFORDANCE_LISTS}
        result["properties"] = {**listed, **list_schemas(shape)}
    return result
