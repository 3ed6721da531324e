"""What the REST face describes of the demo's purchase requests, and how strictly it reads
what it takes (findings F7-F11). The same on the library's own shop:
tests/security/test_rest_descriptions.py.

OPTIONS and the browsable API describe what a route takes from this caller: a transition
route its own operation's input, narrowed as its affordance is, to a caller who may use
it (anyone else gets exactly what a missing route answers); the collection the create
input, to creators only. Page numbers are as strict as page sizes, and a field several
operations take is validated alike by each (create takes no quote attach_quote refuses).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework import serializers
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.evaluation import Available, evaluate
from demo_tests.conftest import PROCUREMENT_ROLES, Demo, ProcurementDemo
from orders.models import Order
from procurement.models import PurchaseRequest
from tests.security.attacks import wire

Api = Callable[[str], APIClient]

REQUESTS = "/api/purchase-requests/"
MISSING_PK = 99999999


def _post_actions(response: Any) -> dict[str, Any] | None:
    assert response.status_code == 200, response.content
    return response.json().get("actions", {}).get("POST")


def _input_names(operation: Any) -> set[str]:
    if operation.input_serializer is None:
        return set()
    return {n for n, f in operation.input_serializer().fields.items() if not f.read_only}


def _affordance(client: APIClient, detail: str, name: str) -> dict[str, Any]:
    body = client.get(detail).json()
    return next(a for a in body["affordances"] if a["name"] == name)


def _choices(field: dict[str, Any]) -> list[str]:
    return [choice["value"] for choice in field["choices"]]


# --- F10: OPTIONS on a transition route describes that transition, to whom may use it --


@pytest.mark.parametrize(
    ("role", "key", "verb", "name", "fields"),
    [
        ("buyer", "pr-11", "order", "order_purchase_request", {"deliveryDate"}),
        ("receiving_clerk", "pr-16", "receive", "receive_purchase_request", {"quantity"}),
        ("approver", "pr-03", "reject", "reject_purchase_request", {"reason", "note"}),
        ("rita", "pr-01", "attach_quote", "attach_quote_purchase_request", {"quoteReference"}),
    ],
)
def test_options_on_a_purchase_request_transition_describes_its_own_narrowed_input(
    api: Api,
    procurement: ProcurementDemo,
    role: str,
    key: str,
    verb: str,
    name: str,
    fields: set[str],
) -> None:
    client = api(role)
    pk = procurement.request(key).pk
    post = _post_actions(client.options(f"{REQUESTS}{pk}/{verb}/"))
    assert post is not None and set(post) == fields  # not create_purchase_request's input
    narrowed = _affordance(client, f"{REQUESTS}{pk}/", name)["constraints"]
    for field, rule in narrowed.get("properties", {}).items():
        if "enum" in rule:
            assert _choices(post[field]) == rule["enum"]
        if "maximum" in rule:
            assert post[field]["max_value"] == rule["maximum"]


def _options_matrix(
    api: Api, model: type, collection: str, roles: tuple[str, ...], pks: list[int]
) -> None:
    catalog = get_catalog()
    users = {u.username: u for u in get_user_model().objects.filter(username__in=roles)}
    for operation in catalog.transitions_for(model):
        verb = operation.method_name
        own = _input_names(operation)
        for role in roles:
            client = api(role)
            for pk in pks:
                route = f"{collection}{pk}/{verb}/"
                answer = client.options(route)
                if not operation.permits(users[role]):
                    # Unknown to the caller: exactly a route that does not exist.
                    missing = client.options(f"{collection}{pk}/{verb}x/")
                    assert answer.status_code == 404, (role, route)
                    assert wire(answer) == wire(missing), (role, route)
                    continue
                post = _post_actions(answer)
                # Only this operation's own input, and only while it is available.
                assert post is None or set(post) <= own, (role, route, sorted(post))
                assert set(answer.json().get("actions", {})) <= {"POST"}, (role, route)


def test_options_on_purchase_request_transitions_never_describe_another_operation(
    api: Api, procurement: ProcurementDemo
) -> None:
    keys = ("pr-01", "pr-03", "pr-11", "pr-16", "pr-18", "pr-20")
    pks = [procurement.request(key).pk for key in keys]
    _options_matrix(api, PurchaseRequest, REQUESTS, PROCUREMENT_ROLES, pks)


@pytest.mark.parametrize(
    ("role", "key", "verb"),
    [
        ("remy", "pr-01", "withdraw"),  # rita's request
        ("remy", "pr-02", "attach_quote"),
    ],
)
def test_options_on_a_transition_of_an_unseen_object_answers_as_on_a_missing_one(
    api: Api, procurement: ProcurementDemo, role: str, key: str, verb: str
) -> None:
    pk = procurement.request(key).pk
    client = api(role)
    unseen = client.options(f"{REQUESTS}{pk}/{verb}/")
    missing = client.options(f"{REQUESTS}{MISSING_PK}/{verb}/")
    assert wire(unseen) == wire(missing)
    assert "actions" not in unseen.json()  # nothing of this or any other operation


@pytest.mark.parametrize(
    ("collection", "creators", "others"),
    [(REQUESTS, ("rita", "approver"), ("buyer", "receiving_clerk", "auditor", "accounts_payable"))],
)
def test_options_on_a_collection_describes_create_to_creators_only_narrowed(
    api: Api,
    procurement: ProcurementDemo,
    collection: str,
    creators: tuple[str, ...],
    others: tuple[str, ...],
) -> None:
    for role in others:
        assert _post_actions(api(role).options(collection)) is None, role
    name = "create_purchase_request"
    checked = 0
    for role in creators:
        client = api(role)
        post = _post_actions(client.options(collection))
        operation = get_catalog().lookup(name)
        assert post is not None and set(post) == _input_names(operation), role
        # Narrowed as the create affordance is (HAL-FORMS's create template, the admin).
        result = evaluate(operation, None, get_user_model().objects.get(username=role))
        assert isinstance(result, Available)
        constraints = result.constraints
        for field, rule in constraints.get("properties", {}).items():
            assert _choices(post[field]) == rule["enum"], role
            checked += 1
        for field in constraints.get("required", []):
            assert post[field]["required"] is True, role
            checked += 1
    assert checked  # rita charges only her cost centers


# --- F11: the browsable API's forms --------------------------------------------------


@pytest.mark.parametrize(
    ("collection", "creator", "other", "create_fields", "help_text"),
    [(REQUESTS, "rita", "buyer", ("title", "costCenter", "unitPrice"), "What is to be bought")],
)
def test_the_browsable_collection_shows_no_create_form_to_who_may_not_create(
    api: Api,
    procurement: ProcurementDemo,
    collection: str,
    creator: str,
    other: str,
    create_fields: tuple[str, ...],
    help_text: str,
) -> None:
    hidden = api(other).get(f"{collection}?format=api")
    assert hidden.status_code == 200
    assert "POST" not in hidden["Allow"]
    html = hidden.content.decode()
    assert 'name="_content"' not in html  # no raw-data form
    for field in create_fields:
        assert f'name="{field}"' not in html, field
    assert help_text not in html
    shown = api(creator).get(f"{collection}?format=api").content.decode()
    assert 'name="_content"' in shown
    assert all(f'name="{field}"' in shown for field in create_fields)


@pytest.mark.parametrize(
    ("role", "key", "verb", "own", "foreign"),
    [("buyer", "pr-11", "order", "deliveryDate", ("title", "unitPrice"))],
)
def test_the_browsable_transition_route_shows_its_own_form(
    api: Api,
    procurement: ProcurementDemo,
    role: str,
    key: str,
    verb: str,
    own: str,
    foreign: tuple[str, ...],
) -> None:
    pk = procurement.request(key).pk
    page = api(role).get(f"{REQUESTS}{pk}/{verb}/?format=api")
    assert page.status_code == 405  # GET on a POST route, with the POST forms
    html = page.content.decode()
    assert f'name="{own}"' in html
    assert f"&quot;{own}&quot;" in html  # the raw-data form's content
    for field in (*foreign, "status", "version"):
        assert f'name="{field}"' not in html, field


# --- F7: page numbers as strict as page sizes ------------------------------------------

LENIENT = ["0_2", "\u0662", "\uff12", "+2", " 2", "2 ", "2.0", "0x2", "2\n"]


@pytest.mark.parametrize("collection", [REQUESTS])
@pytest.mark.parametrize("spelling", LENIENT)
def test_a_page_number_is_as_strict_as_a_page_size(
    api: Api, procurement: ProcurementDemo, collection: str, spelling: str
) -> None:
    client = api("admin")
    assert client.get(collection, {"page_size": "2", "page": "2"}).status_code == 200
    page = client.get(collection, {"page_size": "2", "page": spelling})
    size = client.get(collection, {"page_size": spelling})
    for response, argument in ((page, "page"), (size, "page_size")):
        assert response.status_code == 400, (argument, spelling)
        body = response.json()
        assert body["code"] == "validation_error"
        assert list(body["errors"]) == [argument]
    assert page.json()["errors"] == {"page": ["An integer from 1."]}
    # A well-formed page past the end is still not_found.
    past = client.get(collection, {"page_size": "2", "page": "999999"})
    assert (past.status_code, past.json()["code"]) == (404, "not_found")


# --- F8: one validation for a field, whichever operation takes it ----------------------

DRAFT = {
    "title": "Racks",
    "costCenter": "IT",
    "supplier": "Acme Office",
    "quantity": 1,
    "unitPrice": "12000.00",
    "neededBy": "2031-01-15",
}


@pytest.mark.parametrize(
    "quote", ["<b>none</b>", "Q-1", "q-1234", "Q-12345678901234", "Q-\uff11\uff12\uff13"]
)
def test_create_refuses_the_quote_attach_quote_refuses(
    api: Api, procurement: ProcurementDemo, quote: str
) -> None:
    client = api("rita")
    before = PurchaseRequest.objects.count()
    created = client.post(REQUESTS, {**DRAFT, "quoteReference": quote}, format="json")
    draft = procurement.request("pr-02").pk  # rita's draft above the quote threshold
    attached = client.post(
        f"{REQUESTS}{draft}/attach_quote/", {"quoteReference": quote}, format="json"
    )
    assert attached.status_code == created.status_code == 400
    assert created.json()["errors"]["quoteReference"] == attached.json()["errors"]["quoteReference"]
    assert PurchaseRequest.objects.count() == before
    assert procurement.request("pr-02").quote_reference == ""
    # With a quote both accept, the request is created and may be submitted.
    created = client.post(REQUESTS, {**DRAFT, "quoteReference": "Q-2041"}, format="json")
    assert created.status_code == 201, created.content
    submitted = client.post(f"{REQUESTS}{created.json()['id']}/submit/", {}, format="json")
    assert submitted.status_code == 200, submitted.content


def test_submit_needs_a_quote_the_quote_rule_accepts(
    api: Api, procurement: ProcurementDemo
) -> None:
    # Text held from before the rule, or put there past the operations (the admin's
    # change form): not a quote on file.
    draft = procurement.request("pr-02")
    PurchaseRequest.objects.filter(pk=draft.pk).update(quote_reference="<b>none</b>")
    client = api("rita")
    refused = client.post(f"{REQUESTS}{draft.pk}/submit/", {}, format="json")
    assert refused.status_code == 409
    assert refused.json()["reason"] == "quote_missing"
    assert procurement.request("pr-02").status == "draft"


def _rule(field: serializers.Field) -> tuple[Any, ...]:
    """How a field validates a value, whatever it is called or how it is explained."""
    regexes = tuple(sorted(v.regex.pattern for v in field.validators if hasattr(v, "regex")))
    return (
        type(field).__name__,
        *(
            getattr(field, name, None)
            for name in ("max_length", "min_length", "min_value", "max_value", "max_digits")
        ),
        getattr(field, "decimal_places", None),
        regexes,
    )


def test_a_model_field_several_operations_take_is_validated_alike(demo: Demo) -> None:
    catalog = get_catalog()
    shared: set[str] = set()
    for model in (Order, PurchaseRequest):
        operations = [catalog.create_for(model), *catalog.transitions_for(model)]
        columns = {f.name for f in model._meta.concrete_fields}
        rules: dict[str, dict[str, tuple[Any, ...]]] = {}
        for operation in operations:
            if operation is None or operation.input_serializer is None:
                continue
            for field in operation.input_serializer().fields.values():
                if field.source in columns:
                    rules.setdefault(field.source, {})[operation.name] = _rule(field)
        for source, by_operation in rules.items():
            if len(by_operation) > 1:
                shared.add(f"{model.__name__}.{source}")
                assert len(set(by_operation.values())) == 1, (model, source, by_operation)
    assert {"PurchaseRequest.quote_reference", "PurchaseRequest.quantity"} <= shared
