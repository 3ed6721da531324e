"""The null rule and the provider view of an input schema, as plain functions.

``absent_nulls`` (affordances.arguments): a ``null`` for an optional argument is absent,
on every face (docs/protocol.md#execution). ``tool_input_schema`` (affordances.mcp.tool_schemas):
the catalog's input schema as the MCP tool list gives it to model providers
(docs/protocol.md#mcp) — it may only widen the catalog's. The faces are exercised in
``demo_tests/test_null_arguments.py`` and ``demo_tests/test_providers.py``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from affordances.arguments import absent_nulls
from affordances.mcp.tool_schemas import tool_input_schema
from affordances.schemas import SchemaValidator, takes_null

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "orderId": {"type": "integer", "minimum": 1},
        "note": {"type": "string", "maxLength": 5, "description": "Free text."},
        "assignee": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "level": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4},
        "ratio": {"type": "number", "exclusiveMaximum": 1},
        "kind": {"const": "a"},
        "total": {
            "description": "Total.",
            "anyOf": [
                {
                    "type": "number",
                    "multipleOf": Decimal("0.01"),
                    "exclusiveMaximum": Decimal(10) ** 3,
                    "minimum": Decimal("0.01"),
                },
                {"type": "string", "pattern": "^[0-9]{1,3}(?:\\.[0-9]{1,2})?$"},
            ],
        },
    },
    "required": ["orderId", "total"],
    "additionalProperties": False,
}


def test_a_null_optional_argument_is_absent() -> None:
    assert absent_nulls(SCHEMA, {"orderId": 1, "note": None, "level": None}) == {"orderId": 1}


def test_a_null_required_argument_is_kept_to_be_refused() -> None:
    assert absent_nulls(SCHEMA, {"orderId": None, "total": None}) == {
        "orderId": None,
        "total": None,
    }


def test_a_null_is_kept_where_it_is_a_value_or_no_argument_at_all() -> None:
    # "assignee": null means "no one"; "color" is refused as unknown, null or not.
    arguments = {"orderId": 1, "assignee": None, "color": None}
    assert absent_nulls(SCHEMA, arguments) == arguments


def test_the_tool_schema_has_no_dialect_and_no_keyword_gemini_refuses() -> None:
    tool = tool_input_schema(SCHEMA)
    text = json.dumps(tool, default=str)

    assert "$schema" not in tool
    for keyword in ("multipleOf", "exclusiveMinimum", "exclusiveMaximum", "const"):
        assert f'"{keyword}"' not in text, keyword
    assert SCHEMA["$schema"]  # the catalog's own is untouched (a copy)


def test_the_tool_schema_states_each_bound_exactly_or_in_words() -> None:
    properties = tool_input_schema(SCHEMA)["properties"]

    # On a step, an exclusive bound is the inclusive one: below 1000 in cents, 999.99.
    number = properties["total"]["anyOf"][0]
    assert number == {"type": "number", "minimum": Decimal("0.01"), "maximum": Decimal("999.99")}
    assert properties["total"]["description"] == "Total. Must be a multiple of 0.01."
    level = properties["level"]["anyOf"][0]
    assert (level["minimum"], level["maximum"]) == (1, 3)
    # Without a step no inclusive bound says it: the server's words do.
    assert properties["ratio"]["description"] == "Must be less than 1."
    assert properties["kind"]["anyOf"][0] == {"enum": ["a"]}


def test_optional_arguments_take_null_in_the_tool_schema_required_ones_do_not() -> None:
    tool = tool_input_schema(SCHEMA)
    properties = tool["properties"]

    assert tool["required"] == ["orderId", "total"]
    assert not takes_null(properties["orderId"]) and not takes_null(properties["total"])
    for name in ("note", "level", "ratio", "kind"):
        assert takes_null(properties[name]), name
    assert properties["note"]["description"] == "Free text."  # annotations stay outside
    assert properties["assignee"] == SCHEMA["properties"]["assignee"]  # nullable already


def _as_sent(schema: dict[str, Any]) -> Any:
    """A schema as a client reads it off the wire: its Decimal bounds as JSON numbers."""
    return json.loads(json.dumps(schema, default=float))


@pytest.mark.parametrize(
    "arguments",
    [
        {"orderId": 1, "total": 999.99},
        {"orderId": 1, "total": "0.01", "note": "ab", "level": 3, "ratio": 0.5, "kind": "a"},
        {"orderId": 1, "total": 12, "assignee": None, "level": 1},
    ],
)
def test_the_tool_schema_takes_everything_the_catalog_takes(arguments: dict[str, Any]) -> None:
    catalog = SchemaValidator(SCHEMA)
    tool = Draft202012Validator(_as_sent(tool_input_schema(SCHEMA)))

    assert catalog.is_valid(arguments)
    assert tool.is_valid(arguments)
    # …and a strict-mode model's nulls for what it leaves out.
    filled = {name: arguments.get(name) for name in SCHEMA["properties"]}
    assert tool.is_valid(filled)
    assert catalog.is_valid(absent_nulls(SCHEMA, filled))


@pytest.mark.parametrize(
    ("arguments", "refused_by"),
    [
        ({"orderId": 1, "total": 0.015}, "multipleOf"),
        ({"orderId": 1, "total": 1, "level": 0}, "exclusiveMinimum"),
        ({"orderId": 1, "total": 1, "ratio": 1}, "exclusiveMaximum"),
    ],
)
def test_what_the_tool_schema_leaves_to_words_the_catalog_still_refuses(
    arguments: dict[str, Any], refused_by: str
) -> None:
    errors = list(SchemaValidator(SCHEMA).iter_errors(arguments))
    keywords = {e.validator for e in errors} | {
        sub.validator for e in errors for sub in e.context or ()
    }
    assert refused_by in keywords
