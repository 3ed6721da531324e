"""The protocol's documents as JSON Schema 2020-12 (docs/protocol.md#schemas).

One function returns every schema the protocol publishes, keyed by its file name: the
catalog entry (docs/protocol.md#catalog-entry), the affordance and the unavailable entry,
full and compact (docs/protocol.md#affordance-entry). They are the single source of:

- the committed files ``docs/schemas/*.schema.json`` (``manage.py affordances_schemas``
  writes them; a test fails when the committed ones differ from these);
- what the app serves at ``{api}/schemas/{name}.schema.json``
  (``affordances.rest.views.ProtocolSchemaView``), which the OpenAPI document names.

The schemas describe protocol version :data:`PROTOCOL_VERSION` exactly
(``additionalProperties: false``): a server is tested against them; a client validating
what it receives should ignore members it does not know (docs/protocol.md#versions).
They never depend on settings: a namespace is any URN namespace.
"""

from __future__ import annotations

import json
from typing import Any

from affordances.operations import Kind
from affordances.preview import PREVIEW_SCHEMA
from affordances.shapes import Shape, list_schemas
from affordances.vocabulary import DIALECT

__all__ = ["PROTOCOL_VERSION", "SCHEMA_NAMES", "protocol_schema", "protocol_schemas", "schema_text"]

PROTOCOL_VERSION = "1"

# urn:{namespace}:operation:{name with _ as -}:v{N}; the namespace as NAMESPACE allows it.
OPERATION_URN = (
    r"^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:operation:[A-Za-z0-9]+(-[A-Za-z0-9]+)*:v[1-9][0-9]*$"
)
# An operation's name is also its MCP tool name (1 to 128 of A-Za-z0-9 _ - .).
NAME = r"^[A-Za-z0-9_.-]{1,128}$"
REASON = r"^[a-z][a-z0-9_]*$"


def _id(name: str) -> str:
    return f"urn:django-affordances:protocol:v{PROTOCOL_VERSION}:{name}"


def _document(name: str, title: str, description: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "$schema": DIALECT,
        "$id": _id(name),
        "title": title,
        "description": description,
        "type": "object",
        **body,
        "additionalProperties": False,
    }


_OPERATION = {
    "type": "string",
    "pattern": OPERATION_URN,
    "description": "The catalog entry's id: urn:{namespace}:operation:{slug}:v{N}.",
}
_NAME = {
    "type": "string",
    "pattern": NAME,
    "description": "The catalog entry's name (also the MCP tool name).",
}
_METHOD = {"type": "string", "pattern": "^[A-Z]+$", "description": "The HTTP method."}
# What the protocol says of each member of an entry, over the type the entries' own
# schema gives it (affordances.entries.list_schemas: what every face's schemas use).
_MEMBERS: dict[str, dict[str, Any]] = {
    "operation": _OPERATION,
    "name": _NAME,
    "title": {"description": "The catalog entry's title."},
    "method": _METHOD,
    "target": {"description": "The absolute URL to send the request to."},
    "arguments": {
        "description": "Arguments already bound (the object's id): send them as they are."
    },
    "constraints": {
        "description": "A JSON Schema that only narrows the catalog entry's inputSchema for "
        "this object and caller; validate arguments against both (allOf)."
    },
    "confirmationRequired": {
        "description": "Present (true) when the catalog entry says the operation asks the "
        "person before it runs (docs/protocol.md#confirmations)."
    },
    "validForVersion": {
        "description": "The object's version this entry was computed for: send it back "
        "as expectedVersion (or If-Match)."
    },
    "reason": {
        "pattern": REASON,
        "description": "One machine reason why the operation does not apply now.",
    },
}


def _catalog_entry() -> dict[str, Any]:
    states = {"type": "array", "items": {"type": "string"}, "minItems": 1}
    return _document(
        "catalog-entry",
        "Catalog entry",
        "One operation of the catalog: identity, prose, schemas, hints and, for a "
        "transition, its states. Stable: it never depends on an object's state.",
        {
            "properties": {
                "id": _OPERATION,
                "name": _NAME,
                "title": {"type": "string", "minLength": 1},
                "description": {"type": "string"},
                "resource": {"type": "string", "minLength": 1},
                "kind": {"enum": [kind.value for kind in Kind]},
                "method": _METHOD,
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object"},
                "annotations": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "confirmationRequired": {
                    "type": "boolean",
                    "const": True,
                    "description": "Present when the operation asks the person before it "
                    "runs (docs/protocol.md#confirmations).",
                },
                "transition": {
                    "type": "object",
                    "properties": {
                        "field": {"type": "string"},
                        "source": states,
                        "target": states,
                    },
                    "required": ["field", "source", "target"],
                    "additionalProperties": False,
                },
            },
            "required": [
                "id",
                "name",
                "title",
                "description",
                "resource",
                "kind",
                "method",
                "inputSchema",
                "outputSchema",
                "annotations",
            ],
            "if": {"properties": {"kind": {"const": "transition"}}},
            "then": {"required": ["transition"]},
            "else": {"not": {"required": ["transition"]}},
        },
    )


def _entry(list_name: str, shape: Shape) -> dict[str, Any]:
    """An entry's schema: the entries' own (affordances.entries), each member as the
    protocol describes it, nothing else allowed."""
    items = list_schemas(shape)[list_name]["items"]
    properties = {
        key: {**value, **_MEMBERS.get(key, {})} for key, value in items["properties"].items()
    }
    if shape is Shape.COMPACT and "constraints" in properties:
        # Compact entries leave out constraints that narrow nothing.
        properties["constraints"] = {**properties["constraints"], "minProperties": 1}
    return {"properties": properties, "required": list(items["required"])}


def _affordance_entry(shape: Shape) -> dict[str, Any]:
    if shape is Shape.COMPACT:
        return _document(
            "affordance-entry-compact",
            "Affordance entry (compact)",
            "An operation that applies now, named only: what its catalog entry says is "
            "not restated; constraints are absent when nothing is narrowed.",
            _entry("affordances", shape),
        )
    return _document(
        "affordance-entry",
        "Affordance entry",
        "An operation that applies now to this object, for this caller.",
        _entry("affordances", shape),
    )


def _unavailable_entry(shape: Shape) -> dict[str, Any]:
    if shape is Shape.COMPACT:
        return _document(
            "unavailable-entry-compact",
            "Unavailable entry (compact)",
            "An operation the caller may use that does not apply now, named only.",
            _entry("unavailableAffordances", shape),
        )
    return _document(
        "unavailable-entry",
        "Unavailable entry",
        "An operation the caller may use that does not apply now, and why.",
        _entry("unavailableAffordances", shape),
    )


def protocol_schemas() -> dict[str, dict[str, Any]]:
    """Every published schema, by name (the file is ``{name}.schema.json``)."""
    return {
        "catalog-entry": _catalog_entry(),
        "affordance-entry": _affordance_entry(Shape.FULL),
        "affordance-entry-compact": _affordance_entry(Shape.COMPACT),
        "unavailable-entry": _unavailable_entry(Shape.FULL),
        "unavailable-entry-compact": _unavailable_entry(Shape.COMPACT),
        "preview": _document(
            "preview",
            "Preview",
            "What a run would produce, computed by running it in a transaction that was "
            "rolled back: nothing was kept (docs/protocol.md#previews).",
            {key: value for key, value in PREVIEW_SCHEMA.items() if key != "type"},
        ),
    }


SCHEMA_NAMES = tuple(protocol_schemas())


def protocol_schema(name: str) -> dict[str, Any]:
    """One schema by name; ``KeyError`` for a name the protocol does not publish."""
    return protocol_schemas()[name]


def schema_text(name: str) -> str:
    """The schema as its committed file holds it: two-space JSON, UTF-8, final newline."""
    return json.dumps(protocol_schema(name), indent=2, ensure_ascii=False) + "\n"
