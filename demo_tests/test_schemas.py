"""The catalog's JSON Schemas (docs/protocol.md#catalog) and the rule that constraints only narrow
(docs/protocol.md#constraints).

Decimal keywords (``multipleOf`` of money) are Decimals in Python. Schemas and instances
are loaded through ``json.loads(canonical_json(...), parse_float=Decimal)`` so that
``10.5`` is a multiple of ``0.01`` exactly, not up to float error.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from affordances.catalog import canonical_json, get_catalog
from affordances.constraints import ConstraintWidens, assert_narrows
from orders.models import Order
from orders.rules import cancel_constraints, refund_constraints

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ALL_OPERATIONS = [
    "get_order",
    "list_orders",
    "confirm_order",
    "ship_order",
    "deliver_order",
    "cancel_order",
    "refund_order",
]
TRANSITIONS = ALL_OPERATIONS[2:]
# The smallest valid arguments of each transition (besides orderId).
MINIMAL_ARGUMENTS: dict[str, dict[str, Any]] = {
    "confirm_order": {},
    "ship_order": {"trackingNumber": "ABCD1234"},
    "deliver_order": {},
    "cancel_order": {"reason": "customer_request"},
    "refund_order": {"amount": 10.5},
}


def _exact(data: Any) -> Any:
    """JSON as a client receives it, with every fraction as an exact Decimal."""
    return json.loads(canonical_json(data), parse_float=Decimal)


def _as_served(data: Any) -> Any:
    """JSON as a client receives it, with plain floats."""
    return json.loads(canonical_json(data))


def _document(name: str) -> dict[str, Any]:
    return get_catalog().documents[name]


def _schema_accepts(name: str, arguments: dict[str, Any]) -> bool:
    schema = _exact(_document(name)["inputSchema"])
    instance = _exact({"orderId": 1, **arguments})
    return Draft202012Validator(schema).is_valid(instance)


def _serializer_accepts(name: str, arguments: dict[str, Any]) -> bool:
    serializer_class = get_catalog().lookup(name).input_serializer
    assert serializer_class is not None, f"{name} declares no input serializer"
    return serializer_class(data=arguments).is_valid()


# --- the meta-schema ---------------------------------------------------------------


@pytest.mark.parametrize("name", ALL_OPERATIONS)
@pytest.mark.parametrize("key", ["inputSchema", "outputSchema"])
def test_catalog_schemas_pass_the_2020_12_meta_schema(name, key):
    schema = _document(name)[key]

    Draft202012Validator.check_schema(_as_served(schema))
    Draft202012Validator.check_schema(_exact(schema))


@pytest.mark.parametrize("name", ALL_OPERATIONS)
def test_input_schemas_declare_the_2020_12_dialect_and_no_extra_arguments(name):
    schema = _document(name)["inputSchema"]

    assert schema["$schema"] == DIALECT
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_input_requires_order_id_and_offers_optional_expected_version(name):
    schema = _document(name)["inputSchema"]

    assert schema["properties"]["orderId"]["type"] == "integer"
    # An integer, or its digits as a string (what HAL-FORMS and HTML forms send).
    version = schema["properties"]["expectedVersion"]["anyOf"]
    assert [branch["type"] for branch in version] == ["integer", "string"]
    assert "orderId" in schema["required"]
    assert "expectedVersion" not in schema["required"]


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_input_schema_accepts_its_minimal_arguments_with_and_without_version(name):
    arguments = MINIMAL_ARGUMENTS[name]

    assert _schema_accepts(name, arguments)
    assert _schema_accepts(name, {**arguments, "expectedVersion": 3})
    assert _schema_accepts(name, {**arguments, "expectedVersion": "3"})


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_input_schema_refuses_a_missing_order_id_and_a_bad_version(name):
    schema = Draft202012Validator(_exact(_document(name)["inputSchema"]))
    arguments = _exact(MINIMAL_ARGUMENTS[name])

    assert not schema.is_valid(arguments)
    assert not schema.is_valid({"orderId": 0, **arguments})
    assert not schema.is_valid({"orderId": 1, **arguments, "expectedVersion": 0})
    assert not schema.is_valid({"orderId": 1, **arguments, "expectedVersion": "three"})


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_input_schema_refuses_an_unknown_extra_argument(name):
    arguments = MINIMAL_ARGUMENTS[name]

    assert _schema_accepts(name, arguments)
    assert not _schema_accepts(name, {**arguments, "priority": "high"})


def test_read_input_schemas_bind_the_order_id_and_the_paging_arguments():
    get = Draft202012Validator(_exact(_document("get_order")["inputSchema"]))
    list_ = Draft202012Validator(_exact(_document("list_orders")["inputSchema"]))

    assert get.is_valid({"orderId": 12})
    assert not get.is_valid({})
    assert list_.is_valid({})
    assert list_.is_valid({"page": 2, "pageSize": 200})
    assert not list_.is_valid({"pageSize": 201})
    assert not list_.is_valid({"page": 0})


# --- schema and serializer agree -------------------------------------------------

SAMPLES = [
    ("ship_order", {"trackingNumber": "ABCD1234"}, True),
    ("ship_order", {"trackingNumber": "ABCDEFGHIJ0123456789"}, True),
    ("ship_order", {"trackingNumber": "abc"}, False),
    ("ship_order", {"trackingNumber": "ABC"}, False),
    ("ship_order", {"trackingNumber": "abcd1234"}, False),
    ("ship_order", {"trackingNumber": "ABCD-1234"}, False),
    ("ship_order", {"trackingNumber": "A" * 21}, False),
    ("ship_order", {}, False),
    ("cancel_order", {"reason": "customer_request"}, True),
    ("cancel_order", {"reason": "payment_failure"}, True),
    ("cancel_order", {"reason": "inventory_failure"}, True),
    ("cancel_order", {"reason": "customer_request", "note": "Called to cancel."}, True),
    ("cancel_order", {"reason": "customer_request", "note": ""}, True),
    ("cancel_order", {"reason": "customer_request", "note": "x" * 500}, True),
    ("cancel_order", {"reason": "customer_request", "note": "x" * 501}, False),
    ("cancel_order", {"reason": "changed_my_mind"}, False),
    ("cancel_order", {"reason": ""}, False),
    ("cancel_order", {"note": "no reason given"}, False),
    ("cancel_order", {}, False),
    ("refund_order", {"amount": 10.5}, True),
    ("refund_order", {"amount": 0.07}, True),
    ("refund_order", {"amount": 0.01}, True),
    ("refund_order", {"amount": 300}, True),
    ("refund_order", {"amount": 10.5, "note": "partial refund"}, True),
    ("refund_order", {"amount": 0}, False),
    ("refund_order", {"amount": -1}, False),
    ("refund_order", {"amount": 10.001}, False),
    ("refund_order", {"amount": 10000000000}, False),
    ("refund_order", {"note": "no amount"}, False),
    ("refund_order", {}, False),
]


@pytest.mark.parametrize(
    ("name", "arguments", "valid"),
    SAMPLES,
    ids=[f"{name}-{json.dumps(args)[:40]}" for name, args, _ in SAMPLES],
)
def test_input_schema_accepts_exactly_what_the_input_serializer_accepts(name, arguments, valid):
    by_schema = _schema_accepts(name, arguments)
    by_serializer = _serializer_accepts(name, arguments)

    assert by_serializer is valid, f"serializer: {arguments}"
    assert by_schema is valid, f"inputSchema: {arguments}"


def test_money_precision_is_an_exact_multiple_of_a_cent():
    amount = _exact(_document("refund_order")["inputSchema"])["properties"]["amount"]
    number, text = amount["anyOf"]

    assert number["type"] == "number"
    assert number["multipleOf"] == Decimal("0.01")
    assert number["minimum"] == Decimal("0.01")
    # The decimal rule: or a plain decimal string, within the same digits.
    assert text["type"] == "string"
    assert text["pattern"] == r"^(?!0*(?:\.0*)?$)0*[0-9]{1,10}(?:\.[0-9]{1,2})?$"


# --- assert_narrows ------------------------------------------------------------------

BASE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "enum": ["customer_request", "payment_failure"]},
        # A decimal: a number with a step (bounds narrow numbers with a step only).
        "amount": {"type": "number", "multipleOf": 0.01, "minimum": 1, "maximum": 100},
        "note": {"type": "string", "maxLength": 500},
    },
    "required": ["reason"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "constraint",
    [
        {},
        {"properties": {"reason": {"enum": ["customer_request"]}}},
        {"properties": {"reason": {"enum": ["customer_request", "payment_failure"]}}},
        {"properties": {"reason": {"const": "payment_failure"}}},
        {"properties": {"amount": {"maximum": 50}}},
        {"properties": {"amount": {"maximum": Decimal("99.99")}}},
        {"properties": {"amount": {"maximum": 100}}},
        {"properties": {"amount": {"minimum": 5}}},
        {"properties": {"note": {"maxLength": 20}}},
        {"required": ["note"]},
        {"required": ["amount"], "properties": {"amount": {"maximum": 10}}},
    ],
    ids=[
        "nothing",
        "enum-subset",
        "same-enum",
        "const-in-enum",
        "tighter-maximum",
        "tighter-decimal-maximum",
        "same-maximum",
        "tighter-minimum",
        "tighter-max-length",
        "extra-required",
        "required-and-bound",
    ],
)
def test_assert_narrows_accepts_constraints_that_only_narrow(constraint):
    assert_narrows(BASE, constraint)


@pytest.mark.parametrize(
    "constraint",
    [
        {"properties": {"reason": {"enum": ["customer_request", "payment_failure", "other"]}}},
        {"properties": {"reason": {"enum": ["other"]}}},
        {"properties": {"reason": {"const": "other"}}},
        {"properties": {"amount": {"maximum": 150}}},
        {"properties": {"amount": {"maximum": "100.01"}}},
        {"properties": {"amount": {"minimum": 0}}},
        {"properties": {"note": {"maxLength": 501}}},
        {"properties": {"priority": {"enum": ["high"]}}},
        {"required": ["priority"]},
        {"type": "object"},
        {"anyOf": [{"properties": {"reason": {"enum": ["customer_request"]}}}]},
        {"additionalProperties": True},
        {"properties": {"reason": {"type": "integer"}}},
    ],
    ids=[
        "enum-superset",
        "foreign-enum-value",
        "foreign-const",
        "looser-maximum",
        "looser-decimal-maximum",
        "looser-minimum",
        "looser-max-length",
        "unknown-property",
        "unknown-required",
        "top-level-type",
        "top-level-anyOf",
        "top-level-additionalProperties",
        "property-type",
    ],
)
def test_assert_narrows_refuses_constraints_that_widen_or_it_cannot_judge(constraint):
    with pytest.raises(ConstraintWidens):
        assert_narrows(BASE, constraint)


@pytest.mark.django_db
def test_the_demo_constraints_narrow_the_catalog_schemas(demo):
    cancel = get_catalog().lookup("cancel_order").input_schema
    refund = get_catalog().lookup("refund_order").input_schema
    failed = Order(total=Decimal("75.00"), payment_status="failed")
    authorized = Order(total=Decimal("300.00"), payment_status="authorized")

    for order in (failed, authorized):
        for user in (demo.users["alice"], demo.users["support"]):
            assert_narrows(cancel, cancel_constraints(order, user))
    assert_narrows(refund, refund_constraints(authorized, demo.users["supervisor"]))
    assert cancel_constraints(authorized, demo.users["alice"]) == {
        "properties": {"reason": {"enum": ["customer_request"]}}
    }
