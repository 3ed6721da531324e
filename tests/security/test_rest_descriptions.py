"""What the REST face describes, and how strictly it reads what it takes (findings F7-F11),
on the shop of ``tests.generic.shop``.

OPTIONS and the browsable API describe what a route takes from this caller: a transition
route its own operation's input, narrowed as its affordance is, to a caller who may use
it (anyone else gets exactly what a missing route answers); the collection the create
input, to creators only. Page numbers are as strict as page sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.evaluation import Available, evaluate
from tests.generic.shop import Purchase
from tests.security.attacks import wire
from tests.shop_data import Shop
from tests.shop_oracle import ROLES

Api = Callable[[str], APIClient]

PURCHASES = "/api/purchases/"
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
        ("supervisor", "p-01", "cancel", "cancel_purchase", {"reason", "note"}),
        ("warehouse", "p-05", "ship", "ship_purchase", {"trackingNumber"}),
        ("support", "p-04", "cancel", "cancel_purchase", {"reason", "note"}),
    ],
)
def test_options_on_a_transition_describes_its_own_narrowed_input(
    shop_api: Api, shop: Shop, role: str, key: str, verb: str, name: str, fields: set[str]
) -> None:
    client = shop_api(role)
    pk = shop.purchases[key].pk
    post = _post_actions(client.options(f"{PURCHASES}{pk}/{verb}/"))
    assert post is not None and set(post) == fields  # not create_purchase's input
    narrowed = _affordance(client, f"{PURCHASES}{pk}/", name)["constraints"]
    for field, rule in narrowed.get("properties", {}).items():
        assert _choices(post[field]) == rule["enum"]


def test_options_on_transitions_never_describe_another_operation(shop_api: Api, shop: Shop) -> None:
    pks = [shop.purchases[key].pk for key in ("p-01", "p-05", "p-07", "p-10")]
    catalog = get_catalog()
    users = {u.username: u for u in get_user_model().objects.filter(username__in=ROLES)}
    for operation in catalog.transitions_for(Purchase):
        verb = operation.method_name
        own = _input_names(operation)
        for role in ROLES:
            client = shop_api(role)
            for pk in pks:
                route = f"{PURCHASES}{pk}/{verb}/"
                answer = client.options(route)
                if not operation.permits(users[role]):
                    # Unknown to the caller: exactly a route that does not exist.
                    missing = client.options(f"{PURCHASES}{pk}/{verb}x/")
                    assert answer.status_code == 404, (role, route)
                    assert wire(answer) == wire(missing), (role, route)
                    continue
                post = _post_actions(answer)
                # Only this operation's own input, and only while it is available.
                assert post is None or set(post) <= own, (role, route, sorted(post))
                assert set(answer.json().get("actions", {})) <= {"POST"}, (role, route)


def test_options_on_a_transition_of_an_unseen_object_answers_as_on_a_missing_one(
    shop_api: Api, shop: Shop
) -> None:
    pk = shop.purchases["p-01"].pk  # alice's purchase
    client = shop_api("bob")
    unseen = client.options(f"{PURCHASES}{pk}/cancel/")
    missing = client.options(f"{PURCHASES}{MISSING_PK}/cancel/")
    assert wire(unseen) == wire(missing)
    assert "actions" not in unseen.json()  # nothing of this or any other operation


def test_options_on_a_collection_describes_create_to_creators_only_narrowed(
    shop_api: Api, shop: Shop
) -> None:
    for role in ("warehouse", "supervisor", "auditor"):
        assert _post_actions(shop_api(role).options(PURCHASES)) is None, role
    checked = 0
    for role in ("alice", "support"):
        client = shop_api(role)
        post = _post_actions(client.options(PURCHASES))
        operation = get_catalog().lookup("create_purchase")
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
    assert checked  # alice buys only for herself, support must say for whom


# --- F11: the browsable API's forms --------------------------------------------------


def test_the_browsable_collection_shows_no_create_form_to_who_may_not_create(
    shop_api: Api, shop: Shop
) -> None:
    create_fields = ("description", "total")
    hidden = shop_api("warehouse").get(f"{PURCHASES}?format=api")
    assert hidden.status_code == 200
    assert "POST" not in hidden["Allow"]
    html = hidden.content.decode()
    assert 'name="_content"' not in html  # no raw-data form
    for field in create_fields:
        assert f'name="{field}"' not in html, field
    assert "Total in EUR" not in html
    shown = shop_api("alice").get(f"{PURCHASES}?format=api").content.decode()
    assert 'name="_content"' in shown
    assert all(f'name="{field}"' in shown for field in create_fields)


@pytest.mark.parametrize(
    ("role", "key", "verb", "own"),
    [("support", "p-01", "cancel", "reason"), ("warehouse", "p-05", "ship", "trackingNumber")],
)
def test_the_browsable_transition_route_shows_its_own_form(
    shop_api: Api, shop: Shop, role: str, key: str, verb: str, own: str
) -> None:
    pk = shop.purchases[key].pk
    page = shop_api(role).get(f"{PURCHASES}{pk}/{verb}/?format=api")
    assert page.status_code == 405  # GET on a POST route, with the POST forms
    html = page.content.decode()
    assert f'name="{own}"' in html
    assert f"&quot;{own}&quot;" in html  # the raw-data form's content
    for field in ("description", "total", "status", "version"):
        assert f'name="{field}"' not in html, field


def test_the_browsable_transition_route_of_an_unavailable_operation_shows_no_form(
    shop_api: Api, shop: Shop
) -> None:
    delivered = shop.purchases["p-07"].pk  # support may cancel, not a delivered purchase
    html = shop_api("support").get(f"{PURCHASES}{delivered}/cancel/?format=api").content.decode()
    assert 'name="reason"' not in html
    assert 'name="_content"' not in html


# --- F7: page numbers as strict as page sizes ------------------------------------------

LENIENT = ["0_2", "\u0662", "\uff12", "+2", " 2", "2 ", "2.0", "0x2", "2\n"]


@pytest.mark.parametrize("spelling", LENIENT)
def test_a_page_number_is_as_strict_as_a_page_size(
    shop_api: Api, shop: Shop, spelling: str
) -> None:
    client = shop_api("admin")
    assert client.get(PURCHASES, {"page_size": "2", "page": "2"}).status_code == 200
    page = client.get(PURCHASES, {"page_size": "2", "page": spelling})
    size = client.get(PURCHASES, {"page_size": spelling})
    for response, argument in ((page, "page"), (size, "page_size")):
        assert response.status_code == 400, (argument, spelling)
        body = response.json()
        assert body["code"] == "validation_error"
        assert list(body["errors"]) == [argument]
    assert page.json()["errors"] == {"page": ["An integer from 1."]}
    # A well-formed page past the end is still not_found.
    past = client.get(PURCHASES, {"page_size": "2", "page": "999999"})
    assert (past.status_code, past.json()["code"]) == (404, "not_found")
