"""The decimal rule (issue 35 item 2) on the demo's ``create_order``: a JSON number, or a
plain ASCII decimal string; every face that describes a decimal input publishes the same
``anyOf`` of both, and MCP's pre-check and REST accept the same values.

Moved from tests/test_constraint_vocabulary.py (the library's tests run without the demo).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo
from tests.mcp_wire import Wire
from tests.test_constraint_vocabulary import HAL_FORMS, OPENAPI, _json_schema_2020

# --- the decimal rule -------------------------------------------------------------------

ACCEPTED_MONEY = ["10.00", 10, "10", 10.5, "0012.50"]
REFUSED_MONEY = ["1e1", "1_0", "\u0662", " 10", "10 ", "+10", "1E1", "\uff11\uff10", "0x0a"]
REFUSED_MONEY += ["10.", ".5", "0", "-1", "1.234", "10000000000", True, None, "", [10]]


def _created_over_rest(demo: Demo, total: Any) -> bool:
    client = APIClient()
    client.force_authenticate(demo.users["support"])
    body = {"description": "A lamp", "total": total, "customer": "alice"}
    response = client.post("/api/orders/", body, format="json")
    assert response.status_code in (201, 400), response.content
    if response.status_code == 400:
        assert list(response.json()["errors"]) == ["total"], response.json()
    return response.status_code == 201


def _created_over_mcp(demo: Demo, total: Any) -> bool:
    wire = Wire(str(AccessToken.for_user(demo.users["support"])))
    body = {"description": "A lamp", "total": total, "customer": "alice"}
    result = wire.tool("create_order", body)
    if result["isError"]:
        problem = result["structuredContent"]
        assert problem["code"] == "validation_error" and list(problem["errors"]) == ["total"]
        # Short, and without repeating the value (a long one would come back whole).
        (message,) = problem["errors"]["total"]
        assert len(message) < 80, message
    return not result["isError"]


@pytest.mark.parametrize("total", ACCEPTED_MONEY, ids=repr)
def test_mcp_and_rest_accept_a_json_number_or_a_plain_decimal_string(demo, total):
    assert _created_over_mcp(demo, total)
    assert _created_over_rest(demo, total)


@pytest.mark.parametrize("total", REFUSED_MONEY, ids=repr)
def test_mcp_and_rest_refuse_every_other_spelling(demo, total):
    assert not _created_over_mcp(demo, total)
    assert not _created_over_rest(demo, total)


def test_mcp_refuses_a_bad_spelling_at_its_schema_pre_check_with_the_decimal_rule(demo):
    wire = Wire(str(AccessToken.for_user(demo.users["support"])))
    body = {"description": "A lamp", "total": "1e1", "customer": "alice"}
    problem = wire.tool("create_order", body)["structuredContent"]
    assert problem["errors"] == {
        "total": ['A JSON number, or a plain decimal string such as "12.50".']
    }
    body["total"] = "0"
    problem = wire.tool("create_order", body)["structuredContent"]
    assert problem["errors"] == {"total": ["Must be at least 0.01."]}


def _decimal_faces(demo: Demo) -> dict[str, dict[str, Any]]:
    """``total`` of create_order as each face publishes it."""
    admin = demo.users["admin"]
    client = APIClient()
    client.force_authenticate(admin)
    entry = client.get("/api/operations/create_order/").json()
    tools = Wire(str(AccessToken.for_user(admin))).tools()
    (tool,) = [tool for tool in tools if tool["name"] == "create_order"]
    document = json.loads(client.get("/api/schema/", HTTP_ACCEPT=OPENAPI).content)
    body = document["paths"]["/api/orders/"]["post"]["requestBody"]["content"]
    ref = body["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    templates = client.get("/api/orders/", HTTP_ACCEPT=HAL_FORMS).json()["_templates"]
    (hal,) = [p for p in templates["create_order"]["properties"] if p["name"] == "total"]
    return {
        "catalog": entry["inputSchema"]["properties"]["total"],
        "mcp": tool["inputSchema"]["properties"]["total"],
        "openapi": _json_schema_2020(document["components"]["schemas"][ref]["properties"]["total"]),
        "hal-forms": hal,
    }


def test_every_face_publishes_the_one_decimal_schema(demo):
    faces = _decimal_faces(demo)
    catalog = faces["catalog"]
    number, text = catalog["anyOf"]

    assert number == {
        "type": "number",
        "multipleOf": 0.01,
        "exclusiveMaximum": 1e10,
        "minimum": 0.01,
    }
    assert text == {
        "type": "string",
        "pattern": r"^(?!0*(?:\.0*)?$)0*[0-9]{1,10}(?:\.[0-9]{1,2})?$",
    }
    # MCP's tool states it as model providers take it (no multipleOf nor exclusive bound,
    # which Gemini refuses): the step in words, below 1e10 as at most 9999999999.99 on
    # it. tools/call checks the catalog's schema (the decimal-rule tests above).
    assert faces["mcp"] == {
        "description": catalog["description"] + " Must be a multiple of 0.01.",
        "anyOf": [{"type": "number", "minimum": 0.01, "maximum": 9999999999.99}, text],
    }
    assert faces["openapi"] == catalog
    hal = faces["hal-forms"]
    assert (hal["type"], hal["min"], hal["step"], hal["regex"]) == (
        "number",
        0.01,
        0.01,
        text["pattern"],
    )
