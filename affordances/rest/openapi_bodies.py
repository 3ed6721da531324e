"""The bodies of the OpenAPI document that no serializer describes, as named components.

- the protocol's documents (docs/protocol.md#schemas) — catalog entry, affordance and
  unavailable entries, full and compact — taken from :func:`affordances.protocol.
  protocol_schemas` (the one source of the published files and the served schemas) and
  written in OpenAPI 3.0's dialect;
- the catalog page, the entry point's links, and HAL / HAL-FORMS documents as
  :mod:`affordances.rest.renderers` writes them.

Nothing here depends on a project: the components are the same for every document
(:func:`affordances.rest.openapi.postprocess` adds the ones a document refers to).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from affordances.fieldschema import FORMATS, nullable
from affordances.protocol import protocol_schemas

__all__ = [
    "AFFORDANCE_LIST_PROPERTIES",
    "CATALOG",
    "COMPONENTS",
    "ENTRY_POINT",
    "HAL",
    "HAL_FORMS",
    "PROTOCOL_COMPONENTS",
    "SCHEMA_DOCUMENT",
    "openapi_dialect",
    "ref",
]


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def openapi_dialect(node: Any) -> Any:
    """JSON Schema 2020-12 as OpenAPI 3.0 writes it: boolean exclusive bounds beside their
    bound, ``const`` as an ``enum`` of one, a ``null`` branch as ``nullable``, numbers as
    JSON numbers, a date's ``formatMinimum``/``formatMaximum`` as ``x-formatMinimum``/
    ``x-formatMaximum``."""
    if isinstance(node, list):
        return [openapi_dialect(item) for item in node]
    if isinstance(node, Decimal):
        return float(node)
    if not isinstance(node, dict):
        return node
    out = {key: openapi_dialect(value) for key, value in node.items()}
    for exclusive, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
        value = out.get(exclusive)
        if value is not None and not isinstance(value, bool):
            out[bound], out[exclusive] = value, True
    if "const" in out:
        out["enum"] = [out.pop("const")]
    for key in ("formatMinimum", "formatMaximum"):  # no OpenAPI 3.0 keyword: an extension
        if key in out:
            out[f"x-{key}"] = out.pop(key)
    branches = out.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        out["anyOf"] = [branch for branch in branches if branch != {"type": "null"}]
        out["nullable"] = True
        if len(out["anyOf"]) == 1:
            out.update(out.pop("anyOf")[0])
    return out


def from_openapi(node: Any) -> Any:
    """An OpenAPI 3.0 schema object as JSON Schema 2020-12 (what :func:`openapi_dialect`
    writes, read back): ``nullable`` as a ``null`` branch, boolean exclusive bounds as
    numbers, ``x-formatMinimum``/``x-formatMaximum`` as the keywords; formats JSON Schema
    does not define (``decimal``, ``int64``) and drf-spectacular's enum ids left out. What
    the document's own schemas are narrowed in (:func:`affordances.constraints.narrow_property`)."""
    if isinstance(node, list):
        return [from_openapi(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: from_openapi(value) for key, value in node.items()}
    if out.get("format") is not None and out["format"] not in FORMATS:
        out.pop("format")
    is_nullable = out.pop("nullable", False)
    for exclusive, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
        if out.get(exclusive) is True and bound in out:
            out[exclusive] = out.pop(bound)
        elif out.get(exclusive) is False:
            out.pop(exclusive)
    out.pop("x-spec-enum-id", None)
    for key in ("formatMinimum", "formatMaximum"):
        if f"x-{key}" in out:
            out[key] = out.pop(f"x-{key}")
    return nullable(out) if is_nullable else out


def _typed(node: Any) -> Any:
    """What generated clients need to type a value JSON Schema leaves open: an object
    without ``properties`` takes any member (``additionalProperties: true`` — the same
    meaning, but openapi-typescript otherwise types it as an object with no members); an
    ``enum`` of strings is a string."""
    if isinstance(node, list):
        return [_typed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _typed(value) for key, value in node.items()}
    if out.get("type") == "object" and "properties" not in out:
        out.setdefault("additionalProperties", True)
    enum = out.get("enum")
    if "type" not in out and isinstance(enum, list) and all(isinstance(v, str) for v in enum):
        out["type"] = "string"
    return out


# A protocol schema's keywords OpenAPI 3.0 has no place for: the dialect and the id name
# the published file (x-affordances-protocol links it), and the catalog entry's
# if/then/else ("transition" iff kind is "transition") is said in its description.
_NOT_IN_OPENAPI = ("$schema", "$id", "if", "then", "else")
_CONDITIONAL = " `transition` is present exactly when `kind` is `transition`."


def _component(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    out = {key: value for key, value in schema.items() if key not in _NOT_IN_OPENAPI}
    if "if" in schema:
        out["description"] = str(out.get("description", "")) + _CONDITIONAL
    out.pop("title", None)  # the component's name is its title (and no class name clash)
    typed: dict[str, Any] = _typed(openapi_dialect(out))
    return typed


def _component_name(name: str) -> str:
    """``affordance-entry-compact`` → ``AffordanceEntryCompact``."""
    return "".join(part.capitalize() for part in name.split("-"))


# The protocol's schemas, by component name (CatalogEntry, AffordanceEntry, …).
PROTOCOL_COMPONENTS: dict[str, dict[str, Any]] = {
    _component_name(name): _component(name, schema) for name, schema in protocol_schemas().items()
}

# ``affordances`` and ``unavailableAffordances`` of a resource's representation: full
# entries by default, compact ones with ?affordances=compact (a full entry has the
# ``operation`` a compact one may not have: exactly one of the two matches), absent with
# ?affordances=none.
AFFORDANCE_LIST_PROPERTIES: dict[str, dict[str, Any]] = {
    "affordances": {
        "type": "array",
        "description": "The operations that apply now, for this caller "
        "(docs/protocol.md#affordance-entry): full entries, or compact ones with "
        "?affordances=compact; absent with ?affordances=none.",
        "items": {"oneOf": [ref("AffordanceEntry"), ref("AffordanceEntryCompact")]},
    },
    "unavailableAffordances": {
        "type": "array",
        "description": "The caller's operations that do not apply now, each with its reason "
        "(docs/protocol.md#unavailable-entry); compact with ?affordances=compact, absent "
        "with ?affordances=none.",
        "items": {"oneOf": [ref("UnavailableEntry"), ref("UnavailableEntryCompact")]},
    },
}

CATALOG = "Catalog"
ENTRY_POINT = "EntryPoint"
SCHEMA_DOCUMENT = "JsonSchemaDocument"
HAL = "HalDocument"
HAL_FORMS = "HalFormsDocument"

_LINKS = {
    "type": "object",
    "description": "Links by relation (self, collection, next, prev, or a collection's name).",
    "additionalProperties": ref("HalLink"),
}

# Every component this module defines, by name; a document gets those it refers to.
COMPONENTS: dict[str, dict[str, Any]] = {
    **PROTOCOL_COMPONENTS,
    CATALOG: {
        "type": "object",
        "description": "The caller's operation catalog (docs/protocol.md#catalog).",
        "properties": {"operations": {"type": "array", "items": ref("CatalogEntry")}},
        "required": ["operations"],
        "additionalProperties": False,
    },
    ENTRY_POINT: {
        "type": "object",
        "description": "Links to every collection and to the catalog.",
        "properties": {"_links": _LINKS},
        "required": ["_links"],
        "additionalProperties": False,
    },
    SCHEMA_DOCUMENT: {
        "type": "object",
        "description": "A JSON Schema 2020-12 document (docs/protocol.md#schemas).",
        "additionalProperties": True,
    },
    "HalLink": {
        "type": "object",
        "properties": {"href": {"type": "string", "format": "uri"}},
        "required": ["href"],
        "additionalProperties": False,
    },
    HAL: {
        "type": "object",
        "description": "HAL (application/hal+json): the JSON representation's members, "
        "its links and, for a page, the items embedded under the collection's name.",
        "properties": {
            "_links": _LINKS,
            "_embedded": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": ref(HAL)},
            },
        },
        "required": ["_links"],
        "additionalProperties": True,
    },
    HAL_FORMS: {
        "type": "object",
        "description": "HAL-FORMS (application/prs.hal-forms+json): HAL, the affordance "
        "lists replaced by one template per available operation, keyed by its name "
        "(docs/protocol.md#hal-forms).",
        "properties": {
            "_links": _LINKS,
            "_embedded": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": ref(HAL_FORMS)},
            },
            "_templates": {
                "type": "object",
                "additionalProperties": ref("HalFormsTemplate"),
            },
        },
        "required": ["_links", "_templates"],
        "additionalProperties": True,
    },
    "HalFormsTemplate": {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "method": {"type": "string"},
            "contentType": {"type": "string"},
            "target": {"type": "string", "format": "uri"},
            "properties": {"type": "array", "items": ref("HalFormsProperty")},
        },
        "required": ["title", "method", "contentType", "properties"],
        "additionalProperties": False,
    },
    "HalFormsProperty": {
        "type": "object",
        "description": "One input of a template, narrowed by the affordance's constraints; "
        "the version travels as the hidden expectedVersion.",
        "properties": {
            "name": {"type": "string"},
            "prompt": {"type": "string"},
            "required": {"type": "boolean"},
            "readOnly": {"type": "boolean"},
            "type": {"type": "string"},
            "value": {"type": "string"},
            "regex": {"type": "string"},
            "min": {"type": "number"},
            "max": {"type": "number"},
            "step": {"type": "number"},
            "minLength": {"type": "integer"},
            "maxLength": {"type": "integer"},
            "options": {
                "type": "object",
                "properties": {
                    # A choice's values as the input takes them (text, mostly).
                    "inline": {"type": "array", "items": {}},
                    "minItems": {"type": "integer"},
                    "maxItems": {"type": "integer"},
                },
                "required": ["inline"],
                "additionalProperties": False,
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    },
}
