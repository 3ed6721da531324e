"""``expectedVersion`` has one schema and one parser on every face: an integer from 1,
or the same number as plain ASCII digits — what HAL-FORMS' hidden value and HTML forms
can only send. The catalog and MCP state it, OpenAPI states the same, and ``"1"`` gets
the same answer from MCP as from REST.

(It had three: an integer on the catalog and MCP, integer-or-string in OpenAPI, a
hidden string in HAL-FORMS — so MCP refused the ``"3"`` that REST took.)
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from drf_spectacular.generators import SchemaGenerator
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.mcp.tool_schemas import tool_input_schema
from affordances.vocabulary import MAX_BIGINT
from tests.generic import api as generic_api
from tests.generic.models import Ticket

HAL_FORMS = "application/prs.hal-forms+json"


@pytest.fixture
def project(db: None) -> Iterator[None]:
    models = {"generic.Ticket": generic_api.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(generic_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def client(project: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


def _catalog_version_schema() -> dict[str, Any]:
    schema = get_catalog().lookup("close_ticket").input_schema["properties"]["expectedVersion"]
    return dict(schema)


def _without_prose(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "description"}


def test_the_catalog_mcp_and_openapi_state_one_version_schema(project):
    catalog = _catalog_version_schema()
    tool = tool_input_schema(get_catalog().documents["close_ticket"]["inputSchema"])
    document = SchemaGenerator(urlconf="tests.generic.api").get_schema(request=None, public=True)
    bodies = [
        schema["properties"]["expectedVersion"]
        for schema in document["components"]["schemas"].values()
        if "expectedVersion" in schema.get("properties", {})
    ]
    assert bodies
    for stated in [tool["properties"]["expectedVersion"], *bodies]:
        stated = _without_prose(stated)
        if "anyOf" in stated and {"type": "null"} in stated["anyOf"]:
            stated = stated["anyOf"][0]  # the tool list's optional inputs are nullable
        assert stated == _without_prose(catalog)


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (3, True),
        ("3", True),
        (MAX_BIGINT, True),
        (str(MAX_BIGINT), True),
        (0, False),
        ("0", False),
        ("-3", False),
        (" 3", False),
        ("3.0", False),
        ("٣", False),  # an Arabic-Indic three: a digit to Python, not to the protocol
        ("*", False),
        (str(MAX_BIGINT + 1), False),
        (True, False),
        (3.5, False),
    ],
    ids=repr,
)
def test_the_catalog_schema_takes_what_the_parser_takes(project, value, valid):
    from affordances.problems import Problem
    from affordances.vocabulary import parse_version

    accepted = Draft202012Validator(_catalog_version_schema()).is_valid(value)
    try:
        parsed = parse_version(value)
    except Problem:
        parsed = None
    assert (accepted, parsed is not None) == (valid, valid)


def _mcp_close(client: APIClient, ticket: Ticket, version: Any) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "close_ticket",
            "arguments": {"ticketId": ticket.pk, "expectedVersion": version},
        },
    }
    response = client.post(
        "/agents/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    return {"ok": not result["isError"], "code": result["structuredContent"].get("code")}


def _rest_close(client: APIClient, ticket: Ticket, version: Any) -> dict[str, Any]:
    response = client.post(
        f"/v2/tickets/{ticket.pk}/close/", {"expectedVersion": version}, format="json"
    )
    body = response.json()
    return {"ok": response.status_code == 200, "code": body.get("code")}


@pytest.mark.parametrize("version", ["1", 1, "2", 2, "x", "1.0", " 1", 0, True], ids=repr)
def test_mcp_and_rest_give_one_answer_to_a_version(client, version):
    answers = []
    for face in (_mcp_close, _rest_close):
        ticket = Ticket.objects.create(assignee="ann")
        answers.append(face(client, ticket, version))
    assert answers[0] == answers[1]
    if version == "1" or (version == 1 and not isinstance(version, bool)):
        assert answers[0] == {"ok": True, "code": None}


def test_the_hal_forms_hidden_version_is_what_the_catalog_takes(client):
    ticket = Ticket.objects.create(assignee="ann")
    document = client.get(f"/v2/tickets/{ticket.pk}/", HTTP_ACCEPT=HAL_FORMS).json()
    (hidden,) = [
        prop
        for prop in document["_templates"]["close_ticket"]["properties"]
        if prop["name"] == "expectedVersion"
    ]
    assert hidden["type"] == "hidden" and hidden["value"] == "1"
    assert Draft202012Validator(_catalog_version_schema()).is_valid(hidden["value"])
    assert _mcp_close(client, ticket, hidden["value"]) == {"ok": True, "code": None}
