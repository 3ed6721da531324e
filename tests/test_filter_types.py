"""django-filter filters keep their types on MCP and in OpenAPI (issue 36, finding 10).

One mapping (``affordances.schemas.filter_schema``) gives each filter its JSON Schema:
``NumberFilter`` a number, ``DateFilter`` a date, ``BooleanFilter`` a boolean, a choice
filter an enum, ``ModelChoiceFilter`` the related model's key. The MCP list tool takes
typed values (``{"book": 1}``) and filters with them exactly as the REST list does with
``?book=1``.
"""

from __future__ import annotations

import datetime
import importlib
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from tests.generic import lending_api
from tests.generic.lending import Book, Loan

OPENAPI_JSON = "application/vnd.oai.openapi+json"

EXPECTED = {
    "book": {"type": "integer", "minimum": 1},
    "due": {"type": "string", "format": "date"},
    "fine_above": {"type": "number"},
    "renewed": {"type": "boolean"},
    "kind": {"type": "string", "enum": ["short", "long"]},
    "book_id": {"type": "integer"},  # a NumberFilter over an integer key
}


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": lending_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(lending_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.lending_api"):
            yield


@pytest.fixture
def api(project: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


@pytest.fixture
def loans(project: None) -> dict[str, Loan]:
    dune, emma = Book.objects.create(title="Dune"), Book.objects.create(title="Emma")
    day = datetime.date(2026, 1, 2)
    return {
        "dune": Loan.objects.create(book=dune, due=day, fine=Decimal("0.50")),
        "emma": Loan.objects.create(
            book=emma, due=day + datetime.timedelta(days=1), renewed=True, kind="long"
        ),
    }


def _list(api: APIClient, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_loans", "arguments": arguments},
    }
    response = api.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result.get("isError") is not True, result
    return result["structuredContent"]


def test_the_mcp_list_tool_types_each_filter(project):
    properties = get_catalog().lookup("list_loans").input_schema["properties"]
    for name, schema in EXPECTED.items():
        described = {k: v for k, v in properties[name].items() if k != "description"}
        assert described == schema, name


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"book": "BOOK:dune"}, {"dune"}),
        ({"book_id": "BOOK:emma"}, {"emma"}),
        ({"renewed": True}, {"emma"}),
        ({"renewed": False}, {"dune"}),
        ({"fine_above": 0.25}, {"dune"}),
        ({"fine_above": 0}, {"dune"}),
        ({"due": "2026-01-03"}, {"emma"}),
        ({"kind": "long"}, {"emma"}),
    ],
)
def test_the_mcp_list_tool_filters_with_typed_values(api, loans, arguments, expected):
    # "BOOK:x" stands for the id of x's book: a JSON integer, as the schema says.
    arguments = {
        name: loans[value.removeprefix("BOOK:")].book_id
        if isinstance(value, str) and value.startswith("BOOK:")
        else value
        for name, value in arguments.items()
    }
    page = _list(api, arguments)
    seen = {
        loan
        for loan, instance in loans.items()
        if instance.pk in {r["id"] for r in page["results"]}
    }
    assert seen == expected
    # The REST list, asked the same in a query string, answers the same loans.
    query = {k: str(v).lower() if isinstance(v, bool) else v for k, v in arguments.items()}
    rest = api.get("/api/loans/", query).json()
    assert [r["id"] for r in rest["results"]] == [r["id"] for r in page["results"]]


def test_a_filter_value_of_the_wrong_type_is_refused_by_the_schema(api, loans):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_loans", "arguments": {"book": "one"}},
    }
    response = api.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    answer = response.json()
    assert answer.get("error") or answer["result"].get("isError") is True, answer


def test_the_openapi_document_types_each_filter_alike(api):
    document = api.get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON).json()
    operation = next(
        op
        for path, item in document["paths"].items()
        if path.endswith("/loans/")
        for method, op in item.items()
        if method == "get"
    )
    parameters = {p["name"]: p["schema"] for p in operation["parameters"]}
    for name, schema in EXPECTED.items():
        if "enum" in schema:
            schema = {**schema, "enum": [*schema["enum"], ""]}  # empty: any
        assert parameters[name] == schema, name
