"""HAL-FORMS (docs/protocol.md#hal-forms, mamund's ``application/prs.hal-forms+json``) over the same
evaluation.

Every document is checked by :func:`hal_forms_violations`, a small validator written from
the HAL-FORMS spec (REFERENCES.md "HAL-FORMS"), and against the plain JSON representation
of the same order for the same role. Which templates a role should see is also derived
independently from the tables of docs/demo.md#orders and the demo data of docs/demo.md#demo-data
(:func:`expected_templates`).

Golden files: ``demo_tests/golden/hal_forms/<state>.json`` hold the admin's HAL-FORMS document
of one demo order per state (pending demo-01, confirmed demo-05, shipped demo-06,
delivered demo-07, refunded demo-07 after a supervisor refund of 10, cancelled demo-09),
normalized: ``createdAt``/``updatedAt``/``deliveredAt`` values become ``"<time>"``, ``id``
becomes ``"<id>"``, and in every URL the host becomes ``<host>`` and the order id ``<id>``.
They are compared by :func:`tests.reference.assert_matches_reference`: after an intended
change, review the diff against docs/protocol.md#hal-forms and copy the ``<state>.out.json`` written
beside
a reference over it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from demo_tests.conftest import Demo
from demo_tests.oracle import (
    CANCEL_REASONS,
    CREATE,
    CREATE_TITLE,
    CUSTOMERS,
    ROLES,
    allowed_cancel_reasons,
    capabilities,
    may_create,
    oracle,
    visible_keys,
)
from demo_tests.oracle import TRANSITIONS as ORACLE_TRANSITIONS
from orders.models import Order
from tests.hal_forms_spec import _is_absolute, hal_forms_violations
from tests.reference import assert_matches_reference

Api = Callable[[str], APIClient]

HAL = "application/prs.hal-forms+json"
PROBLEM = "application/problem+json"
BASE = "http://testserver"
COLLECTION = f"{BASE}/api/orders/"
GOLDEN_DIR = Path(__file__).parent / "golden" / "hal_forms"

# --------------------------------------------------------------------------------------
# The oracle: docs/demo.md#orders and docs/demo.md#demo-data as data.
# --------------------------------------------------------------------------------------

# name → (title, URL segment of its action route)
TRANSITIONS: dict[str, tuple[str, str]] = {
    name: (transition.title, transition.segment) for name, transition in ORACLE_TRANSITIONS.items()
}
CAPABILITIES: dict[str, frozenset[str]] = {role: capabilities(role) for role in ROLES}
CREATORS = tuple(role for role in ROLES if may_create(role))
NON_CREATORS = tuple(role for role in ROLES if not may_create(role))


def expected_templates(role: str, key: str) -> set[str]:
    """The operations that apply now to demo order ``key`` for ``role`` (the oracle)."""
    return set(oracle(role, key)[0])


def expected_cancel_reasons(role: str, key: str) -> list[str]:
    return allowed_cancel_reasons(role, key)


def foreign_traces(text: str, role: str) -> list[str]:
    """Names, URNs, titles and routes of operations ``role`` lacks the capability for."""
    needles: list[str] = []
    for name, (title, segment) in TRANSITIONS.items():
        if name not in CAPABILITIES[role]:
            needles += [name, name.replace("_", "-"), title, f"/{segment}/"]
    if CREATE not in CAPABILITIES[role]:
        needles += [CREATE, CREATE.replace("_", "-"), CREATE_TITLE]
    return [needle for needle in needles if needle in text]


VALID_EXAMPLE: dict[str, Any] = {
    "_links": {"self": {"href": "http://example.com/api/orders/1/"}},
    "_templates": {
        "default": {
            "title": "Cancel",
            "method": "POST",
            "contentType": "application/json",
            "target": "http://example.com/api/orders/1/cancel/",
            "properties": [
                {
                    "name": "reason",
                    "required": True,
                    "options": {"inline": ["a", {"prompt": "B", "value": "b"}], "maxItems": 1},
                },
                {"name": "amount", "type": "number", "min": 0.01, "max": 10, "step": 0.01},
                {"name": "v", "type": "hidden", "readOnly": True, "value": "3"},
            ],
        }
    },
}


def _broken(mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = json.loads(json.dumps(VALID_EXAMPLE))
    mutate(document)
    return document


def _props(document: dict[str, Any]) -> list[dict[str, Any]]:
    return document["_templates"]["default"]["properties"]


BROKEN_EXAMPLES: dict[str, dict[str, Any]] = {
    "no _templates": _broken(lambda d: d.pop("_templates")),
    "_templates a list": _broken(lambda d: d.update(_templates=[])),
    "no method": _broken(lambda d: d["_templates"]["default"].pop("method")),
    "empty method": _broken(lambda d: d["_templates"]["default"].update(method="")),
    "no properties": _broken(lambda d: d["_templates"]["default"].pop("properties")),
    "relative target": _broken(lambda d: d["_templates"]["default"].update(target="/x/")),
    "contentType not a string": _broken(lambda d: d["_templates"]["default"].update(contentType=1)),
    "nameless property": _broken(lambda d: _props(d)[0].pop("name")),
    "empty name": _broken(lambda d: _props(d)[0].update(name="")),
    "numeric value": _broken(lambda d: _props(d)[2].update(value=3)),
    "unknown type": _broken(lambda d: _props(d)[1].update(type="decimal")),
    "string max": _broken(lambda d: _props(d)[1].update(max="10")),
    "string required": _broken(lambda d: _props(d)[0].update(required="true")),
    "inline not a list": _broken(lambda d: _props(d)[0]["options"].update(inline="a")),
    "inline number": _broken(lambda d: _props(d)[0]["options"].update(inline=[1])),
    "broken embedded item": _broken(lambda d: d.update(_embedded={"orders": [{"id": 1}]})),
}


def test_the_validator_accepts_a_valid_hal_forms_document() -> None:
    assert hal_forms_violations(VALID_EXAMPLE) == []


@pytest.mark.parametrize("case", BROKEN_EXAMPLES)
def test_the_validator_flags_documents_that_break_hal_forms_rules(case: str) -> None:
    assert hal_forms_violations(BROKEN_EXAMPLES[case]) != []


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def hal_get(client: APIClient, url: str) -> Any:
    response = client.get(url, HTTP_ACCEPT=HAL)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith(HAL)
    return response


def order_url(demo: Demo, key: str) -> str:
    return f"/api/orders/{demo.orders[key].pk}/"


def by_name(properties: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {prop["name"]: prop for prop in properties}


def catalog_of(client: APIClient) -> dict[str, dict[str, Any]]:
    return {op["name"]: op for op in client.get("/api/operations/").json()["operations"]}


def _number(value: Any) -> Decimal:
    return Decimal(str(value))


def check_template_matches_affordance(
    template: dict[str, Any], affordance: dict[str, Any], operation: dict[str, Any], version: int
) -> None:
    """A template is the affordance, with the catalog input narrowed by its constraints."""
    assert template["title"] == affordance["title"]
    assert template["method"] == affordance["method"] == "POST"
    assert template["contentType"] == "application/json"
    assert template["target"] == affordance["target"]
    assert affordance["validForVersion"] == version

    *inputs, hidden = template["properties"]
    assert hidden == {
        "name": "expectedVersion",
        "type": "hidden",
        "readOnly": True,
        "value": str(version),
    }
    schema = operation["inputSchema"]
    declared = [n for n in schema["properties"] if n not in ("orderId", "expectedVersion")]
    assert [prop["name"] for prop in inputs] == declared
    constraints = affordance["constraints"]
    narrowed = constraints.get("properties", {})
    required = set(schema.get("required", [])) | set(constraints.get("required", []))
    for prop in inputs:
        name = prop["name"]
        declared_prop = schema["properties"][name]
        limit = narrowed.get(name, {})
        assert bool(prop.get("required")) == (name in required), name
        if "enum" in declared_prop or "enum" in limit:
            assert prop["options"]["inline"] == limit.get("enum", declared_prop.get("enum"))
        if "maximum" in limit:
            assert _number(prop["max"]) == _number(limit["maximum"])
        if "minimum" in declared_prop:
            assert _number(prop["min"]) == _number(declared_prop["minimum"])
        if "pattern" in declared_prop:
            assert prop["regex"] == declared_prop["pattern"]
        if "maxLength" in declared_prop:
            assert prop["maxLength"] == declared_prop["maxLength"]
        if declared_prop.get("type") == "number":
            assert prop["type"] == "number"


# --------------------------------------------------------------------------------------
# The entry point
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_entry_point_links_orders_and_operations(api: Api, role: str) -> None:
    response = hal_get(api(role), "/api/")
    document = response.json()
    assert hal_forms_violations(document) == []
    assert document["_templates"] == {}
    links = document["_links"]
    assert links["self"]["href"] == f"{BASE}/api/"
    assert links["orders"]["href"] == COLLECTION
    assert links["operations"]["href"] == f"{BASE}/api/operations/"
    assert all(_is_absolute(link["href"]) for link in links.values())
    assert foreign_traces(response.content.decode(), role) == []


def test_entry_point_links_lead_to_the_collection_and_the_catalog(api: Api) -> None:
    client = api("alice")
    links = hal_get(client, "/api/").json()["_links"]
    collection = hal_get(client, links["orders"]["href"]).json()
    assert collection["count"] == 9
    catalog = client.get(links["operations"]["href"]).json()
    assert CREATE in {op["name"] for op in catalog["operations"]}


# --------------------------------------------------------------------------------------
# One order: every role, every order it can see
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_every_visible_order_is_a_valid_hal_forms_document_mirroring_the_json(
    api: Api, demo: Demo, role: str
) -> None:
    client = api(role)
    catalog = catalog_of(client)
    listing = client.get("/api/orders/?page_size=200").json()
    assert {o["id"] for o in listing["results"]} == {
        demo.orders[key].pk for key in visible_keys(role)
    }
    for key in visible_keys(role):
        pk = demo.orders[key].pk
        plain = client.get(order_url(demo, key)).json()
        response = hal_get(client, order_url(demo, key))
        document = response.json()
        text = response.content.decode()

        assert hal_forms_violations(document) == [], key
        # The representation itself, minus the affordance lists, plus hypermedia.
        assert "affordances" not in document and "unavailableAffordances" not in document
        assert {k: v for k, v in document.items() if not k.startswith("_")} == {
            k: v for k, v in plain.items() if k not in ("affordances", "unavailableAffordances")
        }
        assert set(document) - set(plain) == {"_links", "_templates"}
        assert document["_links"]["self"]["href"] == f"{BASE}/api/orders/{pk}/" == plain["url"]
        assert document["_links"]["collection"]["href"] == COLLECTION

        # Same evaluation: one template per available affordance, nothing else.
        affordances = {a["name"]: a for a in plain["affordances"]}
        assert set(document["_templates"]) == set(affordances), key
        assert set(document["_templates"]) == expected_templates(role, key), key
        for name, template in document["_templates"].items():
            check_template_matches_affordance(
                template, affordances[name], catalog[name], plain["version"]
            )
        if "cancel_order" in document["_templates"]:
            reason = by_name(document["_templates"]["cancel_order"]["properties"])["reason"]
            assert reason["options"]["inline"] == expected_cancel_reasons(role, key), key
        # Unavailable operations leave no template; unknown ones leave no trace at all.
        unavailable = {u["name"] for u in plain["unavailableAffordances"]}
        assert not unavailable & set(document["_templates"])
        assert foreign_traces(text, role) == [], key


def test_alice_cancel_template_on_demo_01_is_the_spec_example(api: Api, demo: Demo) -> None:
    pk = demo.orders["demo-01"].pk
    document = hal_get(api("alice"), order_url(demo, "demo-01")).json()
    assert list(document["_templates"]) == ["cancel_order"]
    template = document["_templates"]["cancel_order"]
    assert set(template) == {"title", "method", "contentType", "target", "properties"}
    assert template["title"] == "Cancel order"
    assert template["method"] == "POST"
    assert template["contentType"] == "application/json"
    assert template["target"] == f"{BASE}/api/orders/{pk}/cancel/"
    reason, note, version = template["properties"]
    assert reason == {
        "name": "reason",
        "prompt": "Reason",
        "required": True,
        "options": {"inline": ["customer_request"], "minItems": 1, "maxItems": 1},
    }
    assert {key: note[key] for key in ("name", "prompt", "type")} == {
        "name": "note",
        "prompt": "Note",
        "type": "textarea",
    }
    assert not note.get("required")
    assert "value" not in note and "options" not in note
    assert version == {"name": "expectedVersion", "type": "hidden", "readOnly": True, "value": "1"}


def test_supervisor_refund_template_bounds_the_amount_by_the_total(api: Api, demo: Demo) -> None:
    document = hal_get(api("supervisor"), order_url(demo, "demo-07")).json()
    amount = by_name(document["_templates"]["refund_order"]["properties"])["amount"]
    assert amount["type"] == "number"
    assert amount["required"] is True
    assert _number(amount["max"]) == Decimal("300")
    assert Decimal(0) < _number(amount["min"]) <= Decimal("0.01")
    assert _number(amount["step"]) == Decimal("0.01")


def test_warehouse_ship_template_requires_a_tracking_number_pattern(api: Api, demo: Demo) -> None:
    document = hal_get(api("warehouse"), order_url(demo, "demo-05")).json()
    tracking = by_name(document["_templates"]["ship_order"]["properties"])["trackingNumber"]
    assert tracking["regex"] == "^[A-Z0-9]{8,20}$"
    assert tracking["required"] is True
    assert tracking.get("type", "text") == "text"


def test_staff_cancel_template_offers_payment_failure_only_when_payment_failed(
    api: Api, demo: Demo
) -> None:
    client = api("support")
    failed = hal_get(client, order_url(demo, "demo-04")).json()
    authorized = hal_get(client, order_url(demo, "demo-01")).json()
    reason = by_name(failed["_templates"]["cancel_order"]["properties"])["reason"]
    assert reason["options"]["inline"] == list(CANCEL_REASONS)
    reason = by_name(authorized["_templates"]["cancel_order"]["properties"])["reason"]
    assert reason["options"]["inline"] == ["customer_request", "inventory_failure"]


def test_expected_version_follows_the_order_after_a_transition(api: Api, demo: Demo) -> None:
    client = api("support")
    assert (
        client.post(f"{order_url(demo, 'demo-01')}confirm/", {}, format="json").status_code == 200
    )
    document = hal_get(client, order_url(demo, "demo-01")).json()
    assert document["version"] == 2
    assert set(document["_templates"]) == {"cancel_order"}
    hidden = by_name(document["_templates"]["cancel_order"]["properties"])["expectedVersion"]
    assert hidden["value"] == "2"


# --------------------------------------------------------------------------------------
# Golden files: one order per state, as the admin sees it
# --------------------------------------------------------------------------------------

TIME_KEYS = ("createdAt", "updatedAt", "deliveredAt")
HOST = re.compile(r"^https?://[^/]+")


def normalize(value: Any, pk: int) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "id":
                out[key] = "<id>"
            elif key in TIME_KEYS and item is not None:
                out[key] = "<time>"
            else:
                out[key] = normalize(item, pk)
        return out
    if isinstance(value, list):
        return [normalize(item, pk) for item in value]
    if isinstance(value, str) and HOST.match(value):
        return HOST.sub("http://<host>", value).replace(f"/orders/{pk}/", "/orders/<id>/")
    return value


GOLDEN_STATES = {
    "pending": "demo-01",
    "confirmed": "demo-05",
    "shipped": "demo-06",
    "delivered": "demo-07",
    "refunded": "demo-07",
    "cancelled": "demo-09",
}


@pytest.mark.parametrize("state", GOLDEN_STATES)
def test_admin_document_per_state_equals_its_golden_file(api: Api, demo: Demo, state: str) -> None:
    key = GOLDEN_STATES[state]
    if state == "refunded":
        refund = api("supervisor").post(
            f"{order_url(demo, key)}refund/", {"amount": 10}, format="json"
        )
        assert refund.status_code == 200, refund.content
    document = hal_get(api("admin"), order_url(demo, key)).json()
    assert document["status"] == state
    assert hal_forms_violations(document) == []
    normalized = normalize(document, demo.orders[key].pk)
    assert_matches_reference(normalized, GOLDEN_DIR / f"{state}.json")


def test_golden_files_hold_the_templates_spec_8_gives_the_admin() -> None:
    # The golden files are reviewed data; this pins what review checked.
    expected = {
        "pending": ["confirm_order", "cancel_order"],
        "confirmed": ["ship_order", "cancel_order"],
        "shipped": ["deliver_order"],
        "delivered": ["refund_order"],
        "refunded": [],
        "cancelled": [],
    }
    for state, names in expected.items():
        golden = json.loads((GOLDEN_DIR / f"{state}.json").read_text())
        assert golden["status"] == state
        assert list(golden["_templates"]) == names
        assert golden["_links"] == {
            "self": {"href": "http://<host>/api/orders/<id>/"},
            "collection": {"href": "http://<host>/api/orders/"},
        }
        for name, template in golden["_templates"].items():
            segment = TRANSITIONS[name][1]
            assert template["target"] == f"http://<host>/api/orders/<id>/{segment}/"
            assert template["properties"][-1]["name"] == "expectedVersion"
        assert "affordances" not in golden and "unavailableAffordances" not in golden


# --------------------------------------------------------------------------------------
# The collection
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_collection_embeds_each_visible_order_as_its_own_document(
    api: Api, demo: Demo, role: str
) -> None:
    client = api(role)
    response = hal_get(client, "/api/orders/?page_size=200")
    document = response.json()
    assert hal_forms_violations(document) == []
    assert "results" not in document
    keys = visible_keys(role)
    assert document["count"] == len(keys)
    assert document["_links"]["self"]["href"] == f"{COLLECTION}?page_size=200"
    embedded = document["_embedded"]["orders"]
    assert isinstance(embedded, list)
    assert [item["id"] for item in embedded] == [demo.orders[key].pk for key in keys]
    plain = {o["id"]: o for o in client.get("/api/orders/?page_size=200").json()["results"]}
    for item in embedded:
        assert item["_links"]["self"]["href"] == f"{COLLECTION}{item['id']}/"
        assert set(item["_templates"]) == {a["name"] for a in plain[item["id"]]["affordances"]}
        # Embedded or fetched alone, an order is the same document.
        assert item == hal_get(client, f"/api/orders/{item['id']}/").json()
    assert foreign_traces(response.content.decode(), role) == []


def test_collection_pages_with_next_and_prev_links(api: Api, demo: Demo) -> None:
    client = api("alice")
    first = hal_get(client, "/api/orders/?page_size=2").json()
    assert first["count"] == 9
    assert len(first["_embedded"]["orders"]) == 2
    assert "prev" not in first["_links"]
    next_href = first["_links"]["next"]["href"]
    assert _is_absolute(next_href)
    assert parse_qs(urlsplit(next_href).query) == {"page": ["2"], "page_size": ["2"]}

    seen = [item["id"] for item in first["_embedded"]["orders"]]
    page = first
    pages = 1
    while "next" in page["_links"]:
        page = hal_get(client, page["_links"]["next"]["href"]).json()
        pages += 1
        assert hal_forms_violations(page) == []
        assert _is_absolute(page["_links"]["prev"]["href"])
        seen += [item["id"] for item in page["_embedded"]["orders"]]
    assert pages == 5
    assert seen == [demo.orders[key].pk for key in visible_keys("alice")]


@pytest.mark.parametrize("role", CREATORS)
def test_collection_offers_create_order_to_roles_with_add_order(api: Api, role: str) -> None:
    document = hal_get(api(role), "/api/orders/").json()
    template = document["_templates"][CREATE]
    assert template["title"] == CREATE_TITLE
    assert template["method"] == "POST"
    assert template["contentType"] == "application/json"
    assert template["target"] == COLLECTION
    properties = by_name(template["properties"])
    assert list(properties) == ["description", "total", "customer"]
    description, total, customer = (properties[n] for n in ("description", "total", "customer"))
    assert description["required"] is True
    assert description["maxLength"] == 200
    assert description.get("type", "text") in ("text", "textarea")
    assert total["required"] is True
    assert total["type"] == "number"
    assert _number(total["min"]) == Decimal("0.01")
    if role in CUSTOMERS:
        assert customer["options"]["inline"] == [role]
    else:
        assert customer["required"] is True
        assert "options" not in customer


@pytest.mark.parametrize("role", NON_CREATORS)
def test_collection_offers_no_create_order_to_roles_without_add_order(api: Api, role: str) -> None:
    client = api(role)
    response = hal_get(client, "/api/orders/")
    assert response.json()["_templates"] == {}
    for text in (response.content.decode(), hal_get(client, "/api/").content.decode()):
        assert "create_order" not in text
        assert CREATE_TITLE not in text


def test_submitting_the_create_template_creates_an_order(api: Api, demo: Demo) -> None:
    client = api("alice")
    template = hal_get(client, "/api/orders/").json()["_templates"][CREATE]
    response = client.post(
        template["target"], {"description": "Tea", "total": 12.5}, format="json", HTTP_ACCEPT=HAL
    )
    assert response.status_code == 201, response.content
    assert response["Content-Type"].startswith(HAL)
    document = response.json()
    assert hal_forms_violations(document) == []
    assert document["_links"]["self"]["href"] == response["Location"]
    assert document["status"] == "pending"
    assert set(document["_templates"]) == {"cancel_order"}
    assert Order.objects.filter(pk=document["id"], customer__username="alice").exists()


# --------------------------------------------------------------------------------------
# Errors, the default media type, and a round trip
# --------------------------------------------------------------------------------------


def _is_problem(response: Any, status: int, code: str) -> bool:
    body = response.json()
    return (
        response.status_code == status
        and response["Content-Type"].startswith(PROBLEM)
        and {"type", "title", "status", "code", "detail"} <= set(body)
        and body["status"] == status
        and body["code"] == code
        and "_templates" not in body
        and "_links" not in body
    )


def test_a_missing_order_is_a_problem_document_even_when_hal_is_asked(api: Api) -> None:
    response = api("alice").get("/api/orders/999999/", HTTP_ACCEPT=HAL)
    assert _is_problem(response, 404, "not_found")


def test_an_order_of_someone_else_is_the_same_problem_as_a_missing_one(
    api: Api, demo: Demo
) -> None:
    client = api("alice")
    hidden = client.get(order_url(demo, "demo-10"), HTTP_ACCEPT=HAL)
    missing = client.get("/api/orders/999999/", HTTP_ACCEPT=HAL)
    assert _is_problem(hidden, 404, "not_found")
    assert hidden.json() == missing.json()


def test_a_refused_transition_is_a_problem_document_even_when_hal_is_asked(
    api: Api, demo: Demo
) -> None:
    response = api("alice").post(
        f"{order_url(demo, 'demo-09')}cancel/",
        {"reason": "customer_request"},
        format="json",
        HTTP_ACCEPT=HAL,
    )
    assert _is_problem(response, 409, "operation_not_available")
    assert response.json()["reason"] == "already_cancelled"


@pytest.mark.parametrize("accept", [None, "application/json"])
def test_plain_json_stays_the_default(api: Api, demo: Demo, accept: str | None) -> None:
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    client = api("alice")
    response = client.get(order_url(demo, "demo-01"), **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert [a["name"] for a in body["affordances"]] == ["cancel_order"]
    assert isinstance(body["unavailableAffordances"], list)
    assert "_templates" not in body and "_links" not in body
    listing = client.get("/api/orders/", **headers)
    assert listing["Content-Type"].startswith("application/json")
    assert "results" in listing.json() and "_embedded" not in listing.json()


def test_the_template_posted_as_a_client_would_runs_with_a_string_version(
    api: Api, demo: Demo
) -> None:
    client = api("alice")
    template = hal_get(client, order_url(demo, "demo-01")).json()["_templates"]["cancel_order"]
    body: dict[str, Any] = {}
    for prop in template["properties"]:
        if "value" in prop:
            body[prop["name"]] = prop["value"]
        elif prop.get("required"):
            body[prop["name"]] = prop["options"]["inline"][0]
    assert body == {"reason": "customer_request", "expectedVersion": "1"}
    response = client.post(template["target"], body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"
    assert response.json()["version"] == 2
    assert demo.order("demo-01").status == "cancelled"


def test_a_stale_string_version_from_a_template_is_refused(api: Api, demo: Demo) -> None:
    client = api("alice")
    template = hal_get(client, order_url(demo, "demo-03")).json()["_templates"]["cancel_order"]
    response = client.post(
        template["target"], {"reason": "customer_request", "expectedVersion": "2"}, format="json"
    )
    assert _is_problem(response, 412, "stale_version")
    assert demo.order("demo-03").status == "pending"
    assert demo.order("demo-03").version == 1
