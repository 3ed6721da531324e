"""Content negotiation by q-values (RFC 9110 §12.5.1) and plain HAL, on every view of the
shop (``tests.generic.shop``).

Sends exactly what real clients send: Ketting's default ``Accept`` (verbatim) must get
HAL-FORMS, not JSON; ``application/hal+json`` gets HAL (links and embedded resources, no
forms) rather than 406.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from affordances.rest.negotiation import MediaRange, parse_media_range
from tests.shop_data import Shop

KETTING_ACCEPT = (
    "application/prs.hal-forms+json;q=1.0, application/hal+json;q=0.9, "
    "application/vnd.api+json;q=0.8, application/vnd.siren+json;q=0.8, "
    "application/vnd.collection+json;q=0.8, application/json;q=0.7, text/html;q=0.6"
)
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
HAL_FORMS = "application/prs.hal-forms+json"
HAL = "application/hal+json"
JSON = "application/json"
HTML = "text/html"


def _paths(shop: Shop) -> list[str]:
    purchase = shop.purchase("p-01").pk
    return ["/api/", "/api/operations/", "/api/purchases/", f"/api/purchases/{purchase}/"]


def _media_type(response: Any) -> str:
    return response["Content-Type"].split(";")[0].strip()


@pytest.mark.parametrize(
    ("accept", "served"),
    [
        (KETTING_ACCEPT, HAL_FORMS),
        ("application/prs.hal-forms+json, application/json;q=0.5", HAL_FORMS),
        ("application/json;q=0.5, application/prs.hal-forms+json;q=0.4", JSON),
        ("application/hal+json;q=0.9, application/json;q=0.7", HAL),
        (BROWSER_ACCEPT, HTML),
        (None, JSON),
        ("*/*", JSON),
        # q=0 is "not this": the next renderer in the server's order that */* admits.
        ("application/json;q=0, */*;q=0.1", HTML),
        ("application/json;q=0, text/html;q=0, */*;q=0.1", HAL_FORMS),
        # Equal q: the more specific range wins over the server's order.
        ("*/*;q=0.5, application/hal+json;q=0.5", HAL),
        ("application/*;q=0.2, application/json;q=0.9", JSON),
        # A more specific range overrides a broader one for its type (here: refuses it).
        ("application/*, application/json;q=0", HAL_FORMS),
        # Unreadable weights still ask for the type; junk elements are ignored.
        ("application/hal+json;q=high", HAL),
        ("nonsense, application/hal+json", HAL),
    ],
)
def test_q_values_decide_on_every_view_of_the_app(
    shop_api: Any, shop: Shop, accept: str | None, served: str
) -> None:
    client = shop_api("support")
    for path in _paths(shop):
        extra = {} if accept is None else {"HTTP_ACCEPT": accept}
        response = client.get(path, **extra)
        assert response.status_code == 200, (path, response.content[:200])
        assert _media_type(response) == served, (path, accept)
        assert "Accept" in response["Vary"]


def test_ketting_gets_forms_for_what_applies(shop_api: Any, shop: Shop) -> None:
    client = shop_api("support")
    purchase = shop.purchase("p-01")
    item = client.get(f"/api/purchases/{purchase.pk}/", HTTP_ACCEPT=KETTING_ACCEPT).json()
    listing = client.get("/api/purchases/", HTTP_ACCEPT=KETTING_ACCEPT).json()
    plain = client.get(f"/api/purchases/{purchase.pk}/").json()
    assert set(item["_templates"]) == {a["name"] for a in plain["affordances"]}
    assert "cancel_purchase" in item["_templates"]
    assert all("_templates" in embedded for embedded in listing["_embedded"]["purchases"])


def test_a_type_nothing_renders_is_406_as_a_problem(shop_api: Any, shop: Shop) -> None:
    for accept in ("text/plain", "application/json;q=0, application/prs.hal-forms+json;q=0"):
        response = shop_api("support").get("/api/purchases/", HTTP_ACCEPT=accept)
        assert response.status_code == 406
        assert response.json()["code"] == "not_acceptable"


def test_plain_hal_has_links_and_embedded_resources_but_no_forms(shop_api: Any, shop: Shop) -> None:
    client = shop_api("support")
    purchase = shop.purchase("p-01")
    item_response = client.get(f"/api/purchases/{purchase.pk}/", HTTP_ACCEPT=HAL)
    item = item_response.json()
    plain = client.get(f"/api/purchases/{purchase.pk}/").json()
    listing = client.get("/api/purchases/", HTTP_ACCEPT=HAL).json()

    assert _media_type(item_response) == HAL
    assert item["_links"]["self"]["href"] == plain["url"]
    assert item["_links"]["collection"]["href"].endswith("/api/purchases/")
    # The representation, affordance lists included: a HAL client still learns what
    # applies and where to send it.
    assert {key: value for key, value in item.items() if key != "_links"} == plain
    assert listing["count"] == len(listing["_embedded"]["purchases"])
    assert listing["_links"]["self"]["href"].endswith("/api/purchases/")
    assert "_templates" not in json.dumps(listing) + json.dumps(item)


def test_hal_and_hal_forms_tell_a_customer_nothing_more_than_json(
    shop_api: Any, shop: Shop
) -> None:
    client = shop_api("alice")
    purchase = shop.purchase("p-01")  # alice's
    for accept in (HAL, HAL_FORMS, KETTING_ACCEPT):
        body = client.get(f"/api/purchases/{purchase.pk}/", HTTP_ACCEPT=accept).content.decode()
        for hidden in ("confirm_purchase", "ship_purchase", "deliver_purchase", "refund_purchase"):
            assert hidden not in body, (accept, hidden)


@pytest.mark.parametrize(
    ("fmt", "served"), [("hal", HAL), ("hal-forms", HAL_FORMS), ("json", JSON)]
)
def test_format_picks_the_renderer_outright(
    shop_api: Any, shop: Shop, fmt: str, served: str
) -> None:
    response = shop_api("support").get(f"/api/purchases/?format={fmt}", HTTP_ACCEPT=KETTING_ACCEPT)
    assert response.status_code == 200
    assert _media_type(response) == served


@pytest.mark.parametrize("fmt", ["", "xml"])
def test_a_format_no_renderer_has_is_404(shop_api: Any, shop: Shop, fmt: str) -> None:
    # Present means chosen: an empty ?format= names no renderer, as ?format=xml.
    response = shop_api("support").get(f"/api/purchases/?format={fmt}")
    assert response.status_code == 404


def test_the_accepted_media_type_keeps_the_clients_parameters(shop_api: Any, shop: Shop) -> None:
    # DRF's JSON renderer reads indent from the accepted type: it must survive ranking.
    response = shop_api("support").get("/api/operations/", HTTP_ACCEPT="application/json; indent=4")
    assert response.content.startswith(b'{\n    "operations"')


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("application/json", MediaRange("application", "json", (), 1.0)),
        ("Application/JSON;Q=0.5", MediaRange("application", "json", (), 0.5)),
        ("text/*;q=2", MediaRange("text", "*", (), 1.0)),
        ("*/*;q=-1", MediaRange("*", "*", (), 0.0)),
        (
            "application/json;indent=4;q=0.3",
            MediaRange("application", "json", (("indent", "4"),), 0.3),
        ),
        ("application/json;q=nan", MediaRange("application", "json", (), 1.0)),
        ("*/json", None),
        ("json", None),
        ("", None),
    ],
)
def test_media_ranges_are_read_as_rfc_9110_writes_them(
    text: str, parsed: MediaRange | None
) -> None:
    assert parse_media_range(text) == parsed
