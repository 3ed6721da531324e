"""The operation catalog over the REST face: ``GET /api/operations/`` (docs/protocol.md#catalog).

``demo_tests/golden/catalog.json`` is the orders part of the demo catalog as the admin
superuser sees it (all eight operations); ``demo_tests/golden/catalog_procurement.json`` the
purchase-request part, so that adding the second domain could not move a byte of the
first. They are compared by :func:`tests.reference.assert_matches_reference`: a run
writes its output beside them (``catalog.out.json``) and fails on any difference; after an
intended change, review the diff against docs/protocol.md#catalog and copy the output over the
reference.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from demo_tests.oracle import OPERATIONS, ROLES, catalog_of
from orders.models import Order
from tests.reference import assert_matches_reference

GOLDEN = Path(__file__).parent / "golden" / "catalog.json"
GOLDEN_PROCUREMENT = Path(__file__).parent / "golden" / "catalog_procurement.json"

READS = ["get_order", "list_orders"]
CREATE = "create_order"  # docs/demo.md#orders: kind "create", capability orders.add_order
ALL_OPERATIONS = list(OPERATIONS)
TRANSITIONS = ALL_OPERATIONS[3:]

# Each role sees the two reads, create_order if it holds add_order (customer and
# support), and the transitions it has the capability for, in catalog order (the oracle).
EXPECTED_BY_ROLE = {role: catalog_of(role) for role in ROLES}

# docs/demo.md#orders states; the transition facts every catalog entry must state.
TRANSITION_FACTS = {
    "confirm_order": ("confirm", ["pending"], ["confirmed"]),
    "ship_order": ("ship", ["confirmed"], ["shipped"]),
    "deliver_order": ("deliver", ["shipped"], ["delivered"]),
    "cancel_order": ("cancel", ["pending", "confirmed"], ["cancelled"]),
    "refund_order": ("refund", ["delivered"], ["refunded"]),
}

ENTRY_KEYS = {
    "id",
    "name",
    "title",
    "description",
    "resource",
    "kind",
    "method",
    "inputSchema",
    "outputSchema",
    "annotations",
}
HINTS = {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
CANCEL_URN = "urn:example:operation:cancel-order:v1"


def _catalog(client: APIClient) -> dict[str, Any]:
    response = client.get("/api/operations/")
    assert response.status_code == 200, response.content
    return response.json()


def _part(body: dict[str, Any], resource: str = "order") -> dict[str, Any]:
    """The catalog's entries of one resource, in catalog order."""
    return {"operations": [e for e in body["operations"] if e["resource"] == resource]}


def _names(body: dict[str, Any]) -> list[str]:
    """The orders' operation names (procurement has its own golden file and tests)."""
    return [entry["name"] for entry in _part(body)["operations"]]


def _entry(client: APIClient, name: str) -> dict[str, Any]:
    entries = {entry["name"]: entry for entry in _catalog(client)["operations"]}
    return entries[name]


def _vary(response: Any) -> set[str]:
    return {part.strip().lower() for part in response.get("Vary", "").split(",") if part}


# --- who sees what ---------------------------------------------------------------


@pytest.mark.parametrize(("role", "expected"), list(EXPECTED_BY_ROLE.items()))
def test_each_role_sees_the_reads_and_exactly_its_transitions_in_catalog_order(api, role, expected):
    assert _names(_catalog(api(role))) == expected


def test_anonymous_callers_get_401_for_the_catalog_and_its_entries(demo):
    client = APIClient()

    listing = client.get("/api/operations/")
    detail = client.get("/api/operations/cancel_order/")

    assert listing.status_code == 401
    assert detail.status_code == 401
    assert listing.json()["code"] == "not_authenticated"
    assert "operations" not in listing.json()


# --- the golden file -------------------------------------------------------------


def test_admin_catalog_equals_the_golden_file(api):
    assert_matches_reference(_part(_catalog(api("admin"))), GOLDEN)


def test_admin_catalog_of_purchase_requests_equals_its_golden_file(api):
    catalog = _catalog(api("admin"))

    assert_matches_reference(_part(catalog, "purchase_request"), GOLDEN_PROCUREMENT)
    # Orders first, then procurement: the second resource only appends.
    resources = [entry["resource"] for entry in catalog["operations"]]
    assert resources == sorted(resources, key=lambda r: r != "order")
    assert len([r for r in resources if r == "purchase_request"]) == 19


def test_golden_file_holds_all_eight_operations():
    golden = json.loads(GOLDEN.read_text())

    assert _names(golden) == ALL_OPERATIONS


# --- entry shape (docs/protocol.md#catalog-entry) -------------------------------------------------


def test_cancel_order_entry_has_the_shape_of_spec_section_4(api):
    entry = _entry(api("admin"), "cancel_order")

    # Cancelling asks the person first (docs/protocol.md#confirmations).
    assert set(entry) == ENTRY_KEYS | {"transition", "confirmationRequired"}
    assert entry["confirmationRequired"] is True
    assert entry["id"] == CANCEL_URN
    assert entry["name"] == "cancel_order"
    assert entry["title"] == "Cancel order"
    assert entry["resource"] == "order"
    assert entry["kind"] == "transition"
    assert entry["method"] == "POST"
    assert entry["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert entry["transition"] == {
        "field": "status",
        "source": ["pending", "confirmed"],
        "target": ["cancelled"],
    }
    schema = entry["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["orderId"]["type"] == "integer"
    assert schema["properties"]["reason"]["type"] == "string"
    assert schema["properties"]["reason"]["enum"] == [
        "customer_request",
        "payment_failure",
        "inventory_failure",
    ]
    assert schema["properties"]["note"]["type"] == "string"
    version = schema["properties"]["expectedVersion"]["anyOf"]
    assert [branch["type"] for branch in version] == ["integer", "string"]
    assert set(schema["properties"]) == {"orderId", "reason", "note", "expectedVersion"}
    assert schema["required"] == ["orderId", "reason"]


def test_transition_output_schema_is_the_order_representation(api):
    output = _entry(api("admin"), "cancel_order")["outputSchema"]

    assert output["type"] == "object"
    # docs/protocol.md#affordances: the representation's camelCase keys, plus both affordance lists.
    assert {
        "id",
        "url",
        "customer",
        "status",
        "paymentStatus",
        "total",
        "currency",
        "trackingNumber",
        "createdAt",
        "updatedAt",
        "deliveredAt",
        "version",
        "affordances",
        "unavailableAffordances",
    } <= set(output["properties"])
    assert output["properties"]["affordances"]["type"] == "array"
    assert output["properties"]["unavailableAffordances"]["type"] == "array"


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_entries_state_their_fsm_field_sources_and_targets(api, name):
    entry = _entry(api("admin"), name)
    _, sources, targets = TRANSITION_FACTS[name]

    assert entry["kind"] == "transition"
    assert entry["method"] == "POST"
    assert entry["resource"] == "order"
    assert entry["annotations"]["readOnlyHint"] is False
    assert entry["transition"] == {"field": "status", "source": sources, "target": targets}


@pytest.mark.parametrize("name", TRANSITIONS)
def test_transition_description_is_the_cleaned_docstring_of_its_method(api, name):
    method_name = TRANSITION_FACTS[name][0]
    docstring = getattr(Order, method_name).__doc__

    description = _entry(api("admin"), name)["description"]

    assert docstring, f"Order.{method_name} lost its docstring"
    assert description == inspect.cleandoc(docstring)
    assert not description.startswith((" ", "\n"))
    assert "\n        " not in description  # the source indentation is gone


def test_cancel_description_starts_like_the_spec_example(api):
    description = _entry(api("admin"), "cancel_order")["description"]

    assert description.startswith("Cancel an order before fulfilment begins")


@pytest.mark.parametrize("name", READS)
def test_reads_are_read_only_and_carry_no_transition(api, name):
    entry = _entry(api("admin"), name)

    assert set(entry) == ENTRY_KEYS
    assert entry["kind"] == "read"
    assert entry["method"] == "GET"
    assert entry["resource"] == "order"
    assert entry["annotations"]["readOnlyHint"] is True
    assert entry["annotations"]["destructiveHint"] is False
    assert entry["description"]


@pytest.mark.parametrize("name", ALL_OPERATIONS)
def test_every_entry_has_a_urn_id_and_the_four_boolean_hints(api, name):
    entry = _entry(api("admin"), name)

    assert entry["id"] == f"urn:example:operation:{name.replace('_', '-')}:v1"
    assert entry["title"]
    assert set(entry["annotations"]) == HINTS
    assert all(isinstance(value, bool) for value in entry["annotations"].values())
    assert entry["inputSchema"]["type"] == "object"
    assert entry["outputSchema"]["type"] == "object"


def test_list_orders_input_schema_offers_the_filters_of_the_list_endpoint(api):
    # docs/protocol.md#affordances: lists filter by ?status= and ?customer=; list_orders (also the
    # MCP tool of
    # docs/protocol.md#mcp) must let a client express them, and its own description says "Use the
    # filters".
    entry = _entry(api("admin"), "list_orders")
    properties = entry["inputSchema"]["properties"]

    assert "filters" in entry["description"]
    assert "status" in properties
    assert "customer" in properties
    assert properties["status"]["enum"] == [
        "pending",
        "confirmed",
        "shipped",
        "delivered",
        "refunded",
        "cancelled",
    ]


# --- stability -------------------------------------------------------------------


def test_catalog_bytes_are_identical_across_requests(api):
    client = api("admin")

    first = client.get("/api/operations/")
    second = client.get("/api/operations/")

    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert first["ETag"] == second["ETag"]


def test_catalog_does_not_change_when_orders_change_state(api, demo):
    roles = list(EXPECTED_BY_ROLE)
    before = {role: api(role).get("/api/operations/") for role in roles}

    performed = [
        ("support", "demo-01", "confirm", {}),
        ("support", "demo-10", "cancel", {"reason": "inventory_failure"}),
        ("warehouse", "demo-05", "ship", {"trackingNumber": "ABCD1234"}),
        ("warehouse", "demo-06", "deliver", {}),
        ("alice", "demo-03", "cancel", {"reason": "customer_request"}),
        ("supervisor", "demo-07", "refund", {"amount": 10.5}),
    ]
    for role, key, method, body in performed:
        response = api(role).post(
            f"/api/orders/{demo.orders[key].pk}/{method}/", body, format="json"
        )
        assert response.status_code == 200, (role, key, method, response.content)
    assert demo.order("demo-01").status == "confirmed"
    assert demo.order("demo-07").status == "refunded"

    after = {role: api(role).get("/api/operations/") for role in roles}
    for role in roles:
        assert after[role].content == before[role].content, role
        assert after[role]["ETag"] == before[role]["ETag"], role


def test_catalog_does_not_change_after_refused_and_missing_requests(api, demo):
    client = api("alice")
    before = client.get("/api/operations/")

    client.get("/api/operations/refund_order/")
    client.get("/api/operations/nope/")
    client.post(f"/api/orders/{demo.orders['demo-09'].pk}/cancel/", {}, format="json")
    after = client.get("/api/operations/")

    assert after.content == before.content


def test_callers_with_the_same_capabilities_get_identical_bytes_and_etag(api):
    alice = api("alice").get("/api/operations/")
    bob = api("bob").get("/api/operations/")

    assert alice.content == bob.content
    assert alice["ETag"] == bob["ETag"]


def test_callers_with_different_catalogs_get_different_etags(api):
    etags = {role: api(role).get("/api/operations/")["ETag"] for role in EXPECTED_BY_ROLE}

    # alice and bob share a catalog; every other role sees a different one.
    assert etags["alice"] == etags["bob"]
    distinct = {etags[role] for role in EXPECTED_BY_ROLE if role != "bob"}
    assert len(distinct) == len(EXPECTED_BY_ROLE) - 1


# --- caching headers -------------------------------------------------------------


def test_catalog_has_a_quoted_etag(api):
    etag = api("admin").get("/api/operations/")["ETag"]

    assert etag.startswith('"')
    assert etag.endswith('"')
    assert len(etag) > 2


def test_if_none_match_with_the_etag_gives_304_with_an_empty_body(api):
    client = api("support")
    etag = client.get("/api/operations/")["ETag"]

    response = client.get("/api/operations/", HTTP_IF_NONE_MATCH=etag)

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag


def test_if_none_match_with_the_etag_among_others_gives_304(api):
    client = api("support")
    etag = client.get("/api/operations/")["ETag"]

    response = client.get("/api/operations/", HTTP_IF_NONE_MATCH=f'"other", {etag}')

    assert response.status_code == 304


def test_if_none_match_with_a_different_etag_gives_200_and_the_catalog(api):
    client = api("support")
    plain = client.get("/api/operations/")

    response = client.get("/api/operations/", HTTP_IF_NONE_MATCH='"not-the-catalog"')

    assert response.status_code == 200
    assert response.content == plain.content


def test_another_callers_etag_does_not_give_304(api):
    warehouse_etag = api("warehouse").get("/api/operations/")["ETag"]

    response = api("support").get("/api/operations/", HTTP_IF_NONE_MATCH=warehouse_etag)

    assert response.status_code == 200
    assert _names(response.json()) == EXPECTED_BY_ROLE["support"]


@pytest.mark.parametrize("path", ["/api/operations/", "/api/operations/cancel_order/"])
def test_catalog_responses_vary_on_authorization_and_cookie(api, path):
    response = api("alice").get(path)

    assert response.status_code == 200
    assert {"authorization", "cookie"} <= _vary(response)


def test_a_304_also_varies_on_authorization_and_cookie(api):
    client = api("alice")
    etag = client.get("/api/operations/")["ETag"]

    response = client.get("/api/operations/", HTTP_IF_NONE_MATCH=etag)

    assert response.status_code == 304
    assert {"authorization", "cookie"} <= _vary(response)


# --- one entry -------------------------------------------------------------------


@pytest.mark.parametrize("ident", ["cancel_order", CANCEL_URN])
def test_one_entry_by_name_or_urn_is_the_catalog_entry(api, ident):
    client = api("alice")
    expected = _entry(client, "cancel_order")

    response = client.get(f"/api/operations/{ident}/")

    assert response.status_code == 200
    assert response.json() == expected
    assert response.json()["id"] == CANCEL_URN


def test_one_entry_has_an_etag_and_if_none_match_gives_304(api):
    client = api("alice")
    etag = client.get("/api/operations/cancel_order/")["ETag"]

    cached = client.get("/api/operations/cancel_order/", HTTP_IF_NONE_MATCH=etag)
    other = client.get("/api/operations/get_order/", HTTP_IF_NONE_MATCH=etag)

    assert cached.status_code == 304
    assert cached.content == b""
    assert other.status_code == 200


def test_unknown_and_not_permitted_operations_are_the_same_404(api):
    client = api("alice")

    unknown = client.get("/api/operations/teleport_order/")
    hidden = client.get("/api/operations/refund_order/")
    hidden_urn = client.get("/api/operations/urn:example:operation:refund-order:v1/")

    for response in (unknown, hidden, hidden_urn):
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/problem+json")
        assert response.json()["code"] == "not_found"
        assert response.json()["status"] == 404
    assert hidden.content == unknown.content
    assert hidden_urn.content == unknown.content
    assert "refund" not in hidden.content.decode()


def test_a_permitted_operation_is_found_by_the_role_that_has_it(api):
    response = api("supervisor").get("/api/operations/refund_order/")

    assert response.status_code == 200
    assert response.json()["name"] == "refund_order"


# --- settings ----------------------------------------------------------------------


def test_namespace_setting_changes_every_urn(api):
    config = {"NAMESPACE": "acme", "MODELS": django_settings.AFFORDANCES["MODELS"]}
    client = api("admin")
    default_etag = client.get("/api/operations/")["ETag"]

    with override_settings(AFFORDANCES=config):
        response = client.get("/api/operations/")
        by_new_urn = client.get("/api/operations/urn:acme:operation:cancel-order:v1/")
        by_old_urn = client.get(f"/api/operations/{CANCEL_URN}/")

    assert [entry["id"] for entry in _part(response.json())["operations"]] == [
        f"urn:acme:operation:{name.replace('_', '-')}:v1" for name in ALL_OPERATIONS
    ]
    assert response["ETag"] != default_etag
    assert by_new_urn.status_code == 200
    assert by_new_urn.json()["name"] == "cancel_order"
    assert by_old_urn.status_code == 404
    # Leaving the override restores the demo's namespace.
    assert _entry(client, "cancel_order")["id"] == CANCEL_URN


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"NAMESPACES": "acme"}, "NAMESPACES"),
        (
            {"MODELS": {"orders.Order": {"SERIALISER": "orders.serializers.OrderSerializer"}}},
            "SERIALISER",
        ),
    ],
    ids=["unknown-key", "unknown-model-option"],
)
def test_unknown_affordances_settings_raise_improperly_configured(config, named):
    with (
        override_settings(AFFORDANCES={**django_settings.AFFORDANCES, **config}),
        pytest.raises(ImproperlyConfigured, match=named),
    ):
        get_catalog()
