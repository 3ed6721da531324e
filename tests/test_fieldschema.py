"""The core's serializer → JSON Schema 2020-12 mapper (``affordances.fieldschema``), one
field kind at a time, checked as JSON Schema and against what DRF itself accepts."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.validators import RegexValidator
from jsonschema import Draft202012Validator
from rest_framework import serializers

from affordances.fieldschema import serializer_field_schema, serializer_schema
from affordances.schemas import SchemaValidator

NOT_BLANK_START = r"^[\t\n\u000b\f\r\u001c-\u001f \u0085"


class Inputs(serializers.Serializer):
    """Prose about the code: no description of the data."""

    code = serializers.CharField(
        min_length=3, max_length=8, validators=[RegexValidator(r"^[A-Z]+\Z")]
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=50)
    name = serializers.CharField(label="Full name", help_text="As on the card.")
    count = serializers.IntegerField(min_value=1, max_value=10, default=2)
    ratio = serializers.FloatField(min_value=0, required=False)
    amount = serializers.DecimalField(max_digits=6, decimal_places=2, min_value=Decimal("0.01"))
    urgent = serializers.BooleanField(required=False)
    reason = serializers.ChoiceField(choices=[("late", "Too late"), ("lost", "Lost")])
    tags = serializers.MultipleChoiceField(choices=["a", "b"], required=False)
    day = serializers.DateField(allow_null=True)
    at = serializers.DateTimeField(required=False)
    email = serializers.EmailField(required=False)
    site = serializers.URLField(required=False)
    token = serializers.UUIDField(required=False)
    sizes = serializers.ListField(child=serializers.IntegerField(min_value=0), max_length=3)
    owner = serializers.PrimaryKeyRelatedField(queryset=get_user_model().objects.all())
    by = serializers.SlugRelatedField(
        slug_field="username", queryset=get_user_model().objects.all(), required=False
    )
    created = serializers.DateTimeField(read_only=True)
    hidden = serializers.HiddenField(default="x")


class Line(serializers.Serializer):
    sku = serializers.CharField(max_length=10)
    quantity = serializers.IntegerField(min_value=1)


class Order(serializers.Serializer):
    lines = Line(many=True)
    first = Line(required=False)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return serializer_schema(Inputs, direction="request")


def test_an_input_schema_is_json_schema_2020_12_refusing_unknown_properties(schema):
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "description" not in schema  # the class docstring is about code
    assert "hidden" not in schema["properties"]  # its default fills it
    # A read-only field is stated, never required of a caller.
    assert schema["required"] == sorted(
        ["amount", "code", "day", "name", "owner", "reason", "sizes"]
    )


def test_text_lengths_pattern_and_blank(schema):
    props = schema["properties"]
    assert props["code"] == {
        "type": "string",
        "maxLength": 8,
        "minLength": 3,
        "pattern": "^[A-Z]+$",
    }
    # allow_blank: only NUL is refused; without it "" and whitespace alone are.
    assert props["note"] == {"type": "string", "maxLength": 50, "pattern": r"^[^\u0000]*$"}
    assert props["name"]["minLength"] == 1
    assert props["name"]["pattern"].startswith(NOT_BLANK_START)
    assert (props["name"]["title"], props["name"]["description"]) == (
        "Full name",
        "As on the card.",
    )


def test_numbers(schema):
    props = schema["properties"]
    assert props["count"] == {"type": "integer", "maximum": 10, "minimum": 1, "default": 2}
    assert props["ratio"] == {"type": "number", "minimum": 0}
    assert props["amount"] == {
        "anyOf": [
            {
                "type": "number",
                "multipleOf": Decimal("0.01"),
                "exclusiveMaximum": Decimal(10000),
                "minimum": Decimal("0.01"),
            },
            {"type": "string", "pattern": r"^(?!0*(?:\.0*)?$)0*[0-9]{1,4}(?:\.[0-9]{1,2})?$"},
        ]
    }
    assert props["urgent"] == {"type": "boolean"}


def test_choices_formats_lists_and_null(schema):
    props = schema["properties"]
    assert props["reason"] == {
        "enum": ["late", "lost"],
        "type": "string",
        "description": "* `late` - Too late\n* `lost` - Lost",
    }
    assert props["tags"]["type"] == "array"
    assert props["tags"]["items"]["enum"] == ["a", "b"]
    assert props["day"] == {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
    assert props["at"] == {"type": "string", "format": "date-time"}
    assert props["email"]["format"] == "email"
    assert props["site"]["format"] == "uri"
    assert props["token"] == {"type": "string", "format": "uuid"}
    assert props["sizes"] == {
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "maxItems": 3,
    }
    assert props["created"] == {"type": "string", "format": "date-time", "readOnly": True}


def test_related_inputs_take_the_key_schema_of_the_vocabulary(schema):
    props = schema["properties"]
    assert props["owner"] == {"type": "integer", "minimum": 1}
    # A slug: its model field's value (what it says of itself, the model's help text).
    assert props["by"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 150,
        "description": get_user_model()._meta.get_field("username").help_text,
    }


def test_nested_serializers_and_lists_of_them():
    schema = serializer_schema(Order, direction="request")
    line = {
        "type": "object",
        "properties": {
            "sku": {
                "type": "string",
                "maxLength": 10,
                "minLength": 1,
                "pattern": schema["properties"]["lines"]["items"]["properties"]["sku"]["pattern"],
            },
            "quantity": {"type": "integer", "minimum": 1},
        },
        "required": ["quantity", "sku"],
    }
    assert schema["properties"]["lines"] == {"type": "array", "items": line}
    assert schema["properties"]["first"] == line
    assert schema["required"] == ["lines"]


def test_an_output_decimal_is_drf_s_string():
    field = serializers.DecimalField(max_digits=12, decimal_places=2, read_only=True)
    field.bind("total", Inputs())
    assert serializer_field_schema(field, "response") == {
        "type": "string",
        "pattern": r"^-?\d{0,10}(?:\.\d{0,2})?$",
        "readOnly": True,
    }


@pytest.mark.parametrize(
    "data",
    [
        {"code": "AB"},
        {"code": "abc"},
        {"code": "ABCDEFGHI"},
        {"name": ""},
        {"name": "   "},
        {"name": "a\x00b"},
        {"count": 0},
        {"count": 11},
        {"amount": "0.00"},
        {"amount": "1.234"},
        {"amount": 10000},
        {"reason": "other"},
        {"day": None},
        {"day": "2026-13-01"},
        {"sizes": [1, 2, 3, 4]},
        {"sizes": [-1]},
        {"note": ""},
        {},
    ],
)
def test_the_schema_takes_what_drf_takes(schema, data):
    """A round trip through the validator: a valid base changed one way, accepted by the
    schema exactly when DRF accepts it (format checks aside, which JSON Schema leaves
    to the reader)."""
    base = {
        "code": "ABC",
        "name": "Ann",
        "amount": "12.50",
        "reason": "late",
        "day": "2026-01-02",
        "sizes": [1],
        "owner": 1,
    }
    sent = {**base, **data}
    fields = {name: field for name, field in Inputs().fields.items() if name != "owner"}
    checked = type("Checked", (serializers.Serializer,), dict(fields))(data=sent)
    drf_accepts = checked.is_valid()
    if "day" in data and data["day"] == "2026-13-01":
        drf_accepts = True  # "format" is an annotation to a 2020-12 validator
    assert SchemaValidator(schema).is_valid(sent) == drf_accepts


def test_a_decimal_input_is_a_plain_decimal_where_drf_reads_more(schema):
    """The decimal rule: DRF alone reads "1e2" as 100; the library's inputs do not."""
    amount = {"type": "object", "properties": {"a": schema["properties"]["amount"]}}
    assert serializers.DecimalField(max_digits=6, decimal_places=2).to_internal_value("1e2")
    assert not SchemaValidator(amount).is_valid({"a": "1e2"})
    assert SchemaValidator(amount).is_valid({"a": 12.5})


def test_the_core_mapper_needs_no_drf_spectacular():
    """An MCP-only project: the mapper and the validator import and run with
    drf-spectacular unimportable."""
    script = """
import sys, importlib.abc
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "drf_spectacular":
            raise ImportError(name)
sys.meta_path.insert(0, Block())
import django
from django.conf import settings
settings.configure(INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"])
django.setup()
from rest_framework import serializers
from affordances.fieldschema import serializer_schema
from affordances.schemas import SchemaValidator
class S(serializers.Serializer):
    n = serializers.DecimalField(max_digits=5, decimal_places=2)
schema = serializer_schema(S, direction="request")
assert SchemaValidator(schema).is_valid({"n": "1.25"})
assert not any(name.startswith("drf_spectacular") for name in sys.modules)
print("ok")
"""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "ok", done.stderr
