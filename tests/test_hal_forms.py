"""HAL-FORMS (docs/protocol.md#hal-forms, mamund's ``application/prs.hal-forms+json``) over the same
evaluation, on the shop of ``tests.generic.shop``.

Every document is checked by :func:`hal_forms_violations`, a small validator written from
the HAL-FORMS spec (REFERENCES.md "HAL-FORMS"), and against the plain JSON representation
of the same purchase for the same role. Which templates a role should see is also derived
independently, from the shop's oracle (``tests/shop_oracle.py``: :func:`expected_templates`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from tests.generic.shop import Purchase
from tests.hal_forms_spec import _is_absolute, hal_forms_violations
from tests.shop_data import Shop
from tests.shop_oracle import (
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
from tests.shop_oracle import TRANSITIONS as ORACLE_TRANSITIONS

Api = Callable[[str], APIClient]

HAL = "application/prs.hal-forms+json"
PROBLEM = "application/problem+json"
BASE = "http://testserver"
COLLECTION = f"{BASE}/api/purchases/"

# --------------------------------------------------------------------------------------
# The oracle (tests/shop_oracle.py): what the shop declares, as data.
# --------------------------------------------------------------------------------------

# name → (title, URL segment of its action route)
TRANSITIONS: dict[str, tuple[str, str]] = {
    name: (transition.title, transition.segment) for name, transition in ORACLE_TRANSITIONS.items()
}
CAPABILITIES: dict[str, frozenset[str]] = {role: capabilities(role) for role in ROLES}
CREATORS = tuple(role for role in ROLES if may_create(role))
NON_CREATORS = tuple(role for role in ROLES if not may_create(role))


def expected_templates(role: str, key: str) -> set[str]:
    """The operations that apply now to shop purchase ``key`` for ``role`` (the oracle)."""
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
    "_links": {"self": {"href": "http://example.com/api/purchases/1/"}},
    "_templates": {
        "default": {
            "title": "Cancel",
            "method": "POST",
            "contentType": "application/json",
            "target": "http://example.com/api/purchases/1/cancel/",
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
    "broken embedded item": _broken(lambda d: d.update(_embedded={"purchases": [{"id": 1}]})),
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


def purchase_url(shop: Shop, key: str) -> str:
    return f"/api/purchases/{shop.purchases[key].pk}/"


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
    declared = [n for n in schema["properties"] if n not in ("purchaseId", "expectedVersion")]
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
def test_entry_point_links_purchases_and_operations(shop_api: Api, role: str) -> None:
    response = hal_get(shop_api(role), "/api/")
    document = response.json()
    assert hal_forms_violations(document) == []
    assert document["_templates"] == {}
    links = document["_links"]
    assert links["self"]["href"] == f"{BASE}/api/"
    assert links["purchases"]["href"] == COLLECTION
    assert links["operations"]["href"] == f"{BASE}/api/operations/"
    assert all(_is_absolute(link["href"]) for link in links.values())
    assert foreign_traces(response.content.decode(), role) == []


def test_entry_point_links_lead_to_the_collection_and_the_catalog(shop_api: Api) -> None:
    client = shop_api("alice")
    links = hal_get(client, "/api/").json()["_links"]
    collection = hal_get(client, links["purchases"]["href"]).json()
    assert collection["count"] == 9
    catalog = client.get(links["operations"]["href"]).json()
    assert CREATE in {op["name"] for op in catalog["operations"]}


# --------------------------------------------------------------------------------------
# One purchase: every role, every purchase it can see
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_every_visible_purchase_is_a_valid_hal_forms_document_mirroring_the_json(
    shop_api: Api, shop: Shop, role: str
) -> None:
    client = shop_api(role)
    catalog = catalog_of(client)
    listing = client.get("/api/purchases/?page_size=200").json()
    assert {o["id"] for o in listing["results"]} == {
        shop.purchases[key].pk for key in visible_keys(role)
    }
    for key in visible_keys(role):
        pk = shop.purchases[key].pk
        plain = client.get(purchase_url(shop, key)).json()
        response = hal_get(client, purchase_url(shop, key))
        document = response.json()
        text = response.content.decode()

        assert hal_forms_violations(document) == [], key
        # The representation itself, minus the affordance lists, plus hypermedia.
        assert "affordances" not in document and "unavailableAffordances" not in document
        assert {k: v for k, v in document.items() if not k.startswith("_")} == {
            k: v for k, v in plain.items() if k not in ("affordances", "unavailableAffordances")
        }
        assert set(document) - set(plain) == {"_links", "_templates"}
        assert document["_links"]["self"]["href"] == f"{BASE}/api/purchases/{pk}/" == plain["url"]
        assert document["_links"]["collection"]["href"] == COLLECTION

        # Same evaluation: one template per available affordance, nothing else.
        affordances = {a["name"]: a for a in plain["affordances"]}
        assert set(document["_templates"]) == set(affordances), key
        assert set(document["_templates"]) == expected_templates(role, key), key
        for name, template in document["_templates"].items():
            check_template_matches_affordance(
                template, affordances[name], catalog[name], plain["version"]
            )
        if "cancel_purchase" in document["_templates"]:
            reason = by_name(document["_templates"]["cancel_purchase"]["properties"])["reason"]
            assert reason["options"]["inline"] == expected_cancel_reasons(role, key), key
        # Unavailable operations leave no template; unknown ones leave no trace at all.
        unavailable = {u["name"] for u in plain["unavailableAffordances"]}
        assert not unavailable & set(document["_templates"])
        assert foreign_traces(text, role) == [], key


def test_alice_cancel_template_on_p_01_is_the_spec_example(shop_api: Api, shop: Shop) -> None:
    pk = shop.purchases["p-01"].pk
    document = hal_get(shop_api("alice"), purchase_url(shop, "p-01")).json()
    assert list(document["_templates"]) == ["cancel_purchase"]
    template = document["_templates"]["cancel_purchase"]
    assert set(template) == {"title", "method", "contentType", "target", "properties"}
    assert template["title"] == "Cancel purchase"
    assert template["method"] == "POST"
    assert template["contentType"] == "application/json"
    assert template["target"] == f"{BASE}/api/purchases/{pk}/cancel/"
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


def test_supervisor_refund_template_bounds_the_amount_by_the_total(
    shop_api: Api, shop: Shop
) -> None:
    document = hal_get(shop_api("supervisor"), purchase_url(shop, "p-07")).json()
    amount = by_name(document["_templates"]["refund_purchase"]["properties"])["amount"]
    assert amount["type"] == "number"
    assert amount["required"] is True
    assert _number(amount["max"]) == Decimal("300")
    assert Decimal(0) < _number(amount["min"]) <= Decimal("0.01")
    assert _number(amount["step"]) == Decimal("0.01")


def test_warehouse_ship_template_requires_a_tracking_number_pattern(
    shop_api: Api, shop: Shop
) -> None:
    document = hal_get(shop_api("warehouse"), purchase_url(shop, "p-05")).json()
    tracking = by_name(document["_templates"]["ship_purchase"]["properties"])["trackingNumber"]
    assert tracking["regex"] == "^[A-Z0-9]{8,20}$"
    assert tracking["required"] is True
    assert tracking.get("type", "text") == "text"


def test_staff_cancel_template_offers_payment_failure_only_when_payment_failed(
    shop_api: Api, shop: Shop
) -> None:
    client = shop_api("support")
    failed = hal_get(client, purchase_url(shop, "p-04")).json()
    authorized = hal_get(client, purchase_url(shop, "p-01")).json()
    reason = by_name(failed["_templates"]["cancel_purchase"]["properties"])["reason"]
    assert reason["options"]["inline"] == list(CANCEL_REASONS)
    reason = by_name(authorized["_templates"]["cancel_purchase"]["properties"])["reason"]
    assert reason["options"]["inline"] == ["customer_request", "inventory_failure"]


def test_expected_version_follows_the_purchase_after_a_transition(
    shop_api: Api, shop: Shop
) -> None:
    client = shop_api("support")
    assert (
        client.post(f"{purchase_url(shop, 'p-01')}confirm/", {}, format="json").status_code == 200
    )
    document = hal_get(client, purchase_url(shop, "p-01")).json()
    assert document["version"] == 2
    assert set(document["_templates"]) == {"cancel_purchase"}
    hidden = by_name(document["_templates"]["cancel_purchase"]["properties"])["expectedVersion"]
    assert hidden["value"] == "2"


# --------------------------------------------------------------------------------------
# The collection
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_collection_embeds_each_visible_purchase_as_its_own_document(
    shop_api: Api, shop: Shop, role: str
) -> None:
    client = shop_api(role)
    response = hal_get(client, "/api/purchases/?page_size=200")
    document = response.json()
    assert hal_forms_violations(document) == []
    assert "results" not in document
    keys = visible_keys(role)
    assert document["count"] == len(keys)
    assert document["_links"]["self"]["href"] == f"{COLLECTION}?page_size=200"
    embedded = document["_embedded"]["purchases"]
    assert isinstance(embedded, list)
    assert [item["id"] for item in embedded] == [shop.purchases[key].pk for key in keys]
    plain = {o["id"]: o for o in client.get("/api/purchases/?page_size=200").json()["results"]}
    for item in embedded:
        assert item["_links"]["self"]["href"] == f"{COLLECTION}{item['id']}/"
        assert set(item["_templates"]) == {a["name"] for a in plain[item["id"]]["affordances"]}
        # Embedded or fetched alone, a purchase is the same document.
        assert item == hal_get(client, f"/api/purchases/{item['id']}/").json()
    assert foreign_traces(response.content.decode(), role) == []


def test_collection_pages_with_next_and_prev_links(shop_api: Api, shop: Shop) -> None:
    client = shop_api("alice")
    first = hal_get(client, "/api/purchases/?page_size=2").json()
    assert first["count"] == 9
    assert len(first["_embedded"]["purchases"]) == 2
    assert "prev" not in first["_links"]
    next_href = first["_links"]["next"]["href"]
    assert _is_absolute(next_href)
    assert parse_qs(urlsplit(next_href).query) == {"page": ["2"], "page_size": ["2"]}

    seen = [item["id"] for item in first["_embedded"]["purchases"]]
    page = first
    pages = 1
    while "next" in page["_links"]:
        page = hal_get(client, page["_links"]["next"]["href"]).json()
        pages += 1
        assert hal_forms_violations(page) == []
        assert _is_absolute(page["_links"]["prev"]["href"])
        seen += [item["id"] for item in page["_embedded"]["purchases"]]
    assert pages == 5
    assert seen == [shop.purchases[key].pk for key in visible_keys("alice")]


@pytest.mark.parametrize("role", CREATORS)
def test_collection_offers_create_purchase_to_roles_with_add_purchase(
    shop_api: Api, role: str
) -> None:
    document = hal_get(shop_api(role), "/api/purchases/").json()
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
def test_collection_offers_no_create_purchase_to_roles_without_add_purchase(
    shop_api: Api, role: str
) -> None:
    client = shop_api(role)
    response = hal_get(client, "/api/purchases/")
    assert response.json()["_templates"] == {}
    for text in (response.content.decode(), hal_get(client, "/api/").content.decode()):
        assert "create_purchase" not in text
        assert CREATE_TITLE not in text


def test_submitting_the_create_template_creates_a_purchase(shop_api: Api, shop: Shop) -> None:
    client = shop_api("alice")
    template = hal_get(client, "/api/purchases/").json()["_templates"][CREATE]
    response = client.post(
        template["target"], {"description": "Tea", "total": 12.5}, format="json", HTTP_ACCEPT=HAL
    )
    assert response.status_code == 201, response.content
    assert response["Content-Type"].startswith(HAL)
    document = response.json()
    assert hal_forms_violations(document) == []
    assert document["_links"]["self"]["href"] == response["Location"]
    assert document["status"] == "pending"
    assert set(document["_templates"]) == {"cancel_purchase"}
    assert Purchase.objects.filter(pk=document["id"], customer="alice").exists()


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


def test_a_missing_purchase_is_a_problem_document_even_when_hal_is_asked(shop_api: Api) -> None:
    response = shop_api("alice").get("/api/purchases/999999/", HTTP_ACCEPT=HAL)
    assert _is_problem(response, 404, "not_found")


def test_a_purchase_of_someone_else_is_the_same_problem_as_a_missing_one(
    shop_api: Api, shop: Shop
) -> None:
    client = shop_api("alice")
    hidden = client.get(purchase_url(shop, "p-10"), HTTP_ACCEPT=HAL)
    missing = client.get("/api/purchases/999999/", HTTP_ACCEPT=HAL)
    assert _is_problem(hidden, 404, "not_found")
    assert hidden.json() == missing.json()


def test_a_refused_transition_is_a_problem_document_even_when_hal_is_asked(
    shop_api: Api, shop: Shop
) -> None:
    response = shop_api("alice").post(
        f"{purchase_url(shop, 'p-09')}cancel/",
        {"reason": "customer_request"},
        format="json",
        HTTP_ACCEPT=HAL,
    )
    assert _is_problem(response, 409, "operation_not_available")
    assert response.json()["reason"] == "already_cancelled"


@pytest.mark.parametrize("accept", [None, "application/json"])
def test_plain_json_stays_the_default(shop_api: Api, shop: Shop, accept: str | None) -> None:
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    client = shop_api("alice")
    response = client.get(purchase_url(shop, "p-01"), **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert [a["name"] for a in body["affordances"]] == ["cancel_purchase"]
    assert isinstance(body["unavailableAffordances"], list)
    assert "_templates" not in body and "_links" not in body
    listing = client.get("/api/purchases/", **headers)
    assert listing["Content-Type"].startswith("application/json")
    assert "results" in listing.json() and "_embedded" not in listing.json()


def test_the_template_posted_as_a_client_would_runs_with_a_string_version(
    shop_api: Api, shop: Shop
) -> None:
    client = shop_api("alice")
    template = hal_get(client, purchase_url(shop, "p-01")).json()["_templates"]["cancel_purchase"]
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
    assert shop.purchase("p-01").status == "cancelled"


def test_a_stale_string_version_from_a_template_is_refused(shop_api: Api, shop: Shop) -> None:
    client = shop_api("alice")
    template = hal_get(client, purchase_url(shop, "p-03")).json()["_templates"]["cancel_purchase"]
    response = client.post(
        template["target"], {"reason": "customer_request", "expectedVersion": "2"}, format="json"
    )
    assert _is_problem(response, 412, "stale_version")
    assert shop.purchase("p-03").status == "pending"
    assert shop.purchase("p-03").version == 1
