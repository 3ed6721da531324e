"""The protocol's JSON Schema files (docs/schemas/, docs/protocol.md#schemas) hold for
the demo's real representations: REST full and compact, MCP hybrid and compact, the
catalog; the app serves the same schemas and its OpenAPI document names where."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.protocol import SCHEMA_NAMES, protocol_schema
from demo_tests.conftest import Demo
from tests.mcp_wire import LEGACY, Wire

pytestmark = pytest.mark.django_db

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"
COLLECTIONS = ("/api/orders/", "/api/purchase-requests/")
# Every capability, a role of each domain, and customers who see little.
ROLES = ("admin", "support", "supervisor", "alice", "approver", "buyer", "rita")


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def client(demo: Demo, username: str) -> APIClient:
    from django.contrib.auth import get_user_model

    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(username=username))
    return api


def representations(demo: Demo, username: str, query: str) -> Iterator[dict[str, Any]]:
    api = client(demo, username)
    for collection in COLLECTIONS:
        page = api.get(f"{collection}?page_size=200{query}")
        assert page.status_code == 200, page.content
        yield from page.json()["results"]


def assert_entries(representation: dict[str, Any], suffix: str) -> int:
    available, unavailable = (
        validator(f"affordance-entry{suffix}"),
        validator(f"unavailable-entry{suffix}"),
    )
    for entry in representation["affordances"]:
        available.validate(entry)
    for entry in representation["unavailableAffordances"]:
        unavailable.validate(entry)
    return len(representation["affordances"]) + len(representation["unavailableAffordances"])


@pytest.mark.parametrize(("query", "suffix"), [("", ""), ("&affordances=compact", "-compact")])
def test_rest_representations_validate(demo: Demo, procurement: Any, query: str, suffix: str):
    seen = sum(
        assert_entries(representation, suffix)
        for username in ROLES
        for representation in representations(demo, username, query)
    )
    assert seen > 100
    # And each shape is really that shape: a full entry is no compact one.
    wrong = validator("affordance-entry-compact" if not suffix else "affordance-entry")
    sample = next(r for r in representations(demo, "admin", query) if r["affordances"])
    assert not wrong.is_valid(sample["affordances"][0])


def test_a_transitions_answer_validates(demo: Demo):
    pk = demo.orders["demo-01"].pk
    answer = client(demo, "support").post(f"/api/orders/{pk}/confirm/", {}, format="json")
    assert answer.status_code == 200
    assert assert_entries(answer.json(), "") > 0


@pytest.mark.parametrize(("path", "suffix"), [("/mcp", ""), ("/mcp/compact", "-compact")])
def test_mcp_representations_validate(demo: Demo, procurement: Any, path: str, suffix: str):
    seen = 0
    for username in ("admin", "supervisor", "alice", "approver"):
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.get(username=username)
        wire = Wire(str(AccessToken.for_user(user)), path=path, version=LEGACY)
        for tool in ("list_orders", "list_purchase_requests"):
            result = wire.tool(tool, {})
            assert not result.get("isError"), result
            for representation in result["structuredContent"]["results"]:
                seen += assert_entries(representation, suffix)
        one = wire.tool("get_order", {"orderId": demo.orders["demo-01"].pk})
        if not one.get("isError"):
            seen += assert_entries(one["structuredContent"], suffix)
    assert seen > 50


def test_every_catalog_entry_validates(demo: Demo, procurement: Any):
    catalog = validator("catalog-entry")
    for username in ("admin", "alice", "rita"):
        operations = client(demo, username).get("/api/operations/").json()["operations"]
        assert operations
        for entry in operations:
            catalog.validate(entry)
    assert {
        e["kind"] for e in client(demo, "admin").get("/api/operations/").json()["operations"]
    } == {
        "read",
        "transition",
        "create",
    }


def test_the_app_serves_each_schema_and_the_openapi_document_names_it(demo: Demo):
    api = client(demo, "alice")
    document = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    named = document["x-affordances-protocol"]["schemas"]
    assert set(named) == set(SCHEMA_NAMES)
    for name, url in named.items():
        assert url == f"http://testserver/api/schemas/{name}.schema.json"
        answer = api.get(url)
        assert answer.status_code == 200
        assert answer["Content-Type"].startswith("application/schema+json")
        assert json.loads(answer.content) == protocol_schema(name)
        assert api.get(url, HTTP_IF_NONE_MATCH=answer["ETag"]).status_code == 304
    assert api.get("/api/schemas/no-such.schema.json").status_code == 404
    assert APIClient().get("/api/schemas/affordance-entry.schema.json").status_code == 401
