"""Procurement on the HAL-FORMS and admin faces: the same registration, the same policy."""

from __future__ import annotations

from collections.abc import Callable

from django.test import Client
from rest_framework.test import APIClient

from demo_tests.conftest import DEMO_PASSWORD, ProcurementDemo
from demo_tests.test_admin import available_buttons, messages_of, parse, unavailable_items
from demo_tests.test_hal_forms import hal_get
from procurement.models import CostCenter
from procurement.rules import delivery_dates
from tests.hal_forms_spec import hal_forms_violations

Api = Callable[[str], APIClient]


def hal(api: Api, role: str, procurement: ProcurementDemo, key: str) -> dict:
    response = hal_get(api(role), f"/api/purchase-requests/{procurement.request(key).pk}/")
    assert response.status_code == 200
    document = response.json()
    assert hal_forms_violations(document) == []
    return document


def test_hal_forms_offers_the_order_with_the_suppliers_dates(
    api: Api, procurement: ProcurementDemo
) -> None:
    document = hal(api, "buyer", procurement, "pr-11")
    templates = document["_templates"]
    assert {t["title"] for t in templates.values()} == {"Place order", "Cancel request"}
    (order,) = [t for t in templates.values() if t["title"] == "Place order"]
    (date,) = [p for p in order["properties"] if p["name"] == "deliveryDate"]
    assert date["options"]["inline"] == delivery_dates(procurement.request("pr-11"))
    assert order["target"].endswith(
        f"/api/purchase-requests/{procurement.request('pr-11').pk}/order/"
    )


def test_hal_forms_has_no_template_for_what_policy_forbids(
    api: Api, procurement: ProcurementDemo
) -> None:
    frozen = hal(api, "buyer", procurement, "pr-12")  # period freeze: only cancel
    assert {t["title"] for t in frozen["_templates"].values()} == {"Cancel request"}
    own = hal(api, "approver", procurement, "pr-05")  # four eyes; withdraw is hers
    assert {t["title"] for t in own["_templates"].values()} == {"Withdraw request"}


def test_hal_forms_for_an_auditor_has_no_payment_template(
    api: Api, procurement: ProcurementDemo
) -> None:
    document = hal(api, "auditor", procurement, "pr-20")
    assert document["_templates"] == {}
    text = str(document)
    assert "pay-purchase-request" not in text and "/pay/" not in text


# --- the admin --------------------------------------------------------------------


def login(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=DEMO_PASSWORD)
    return client


def change_url(pk: int) -> str:
    return f"/admin/procurement/purchaserequest/{pk}/change/"


def test_admin_panel_shows_the_policy(procurement: ProcurementDemo) -> None:
    page = parse(
        login("approver").get(change_url(procurement.request("pr-04").pk)).content.decode()
    )
    assert set(available_buttons(page)) == {
        "reject_purchase_request",
        "request_changes_purchase_request",
    }
    reasons = {n: i.attrs["data-reason"] for n, i in unavailable_items(page).items()}
    assert reasons["approve_purchase_request"] == "over_approval_limit"


def test_admin_approval_reserves_the_budget(procurement: ProcurementDemo) -> None:
    request = procurement.request("pr-03")
    before = CostCenter.objects.get(code="IT").committed
    response = login("approver").post(
        f"/admin/procurement/purchaserequest/{request.pk}/operation/approve_purchase_request/",
        {"note": "fine", "expectedVersion": "1"},
    )
    assert response.status_code == 302
    assert messages_of(response)[0].startswith("Approve request: done.")
    assert CostCenter.objects.get(code="IT").committed == before + 3000


def test_admin_does_not_show_payment_to_a_buyer(procurement: ProcurementDemo) -> None:
    client = login("buyer")
    page = parse(client.get(change_url(procurement.request("pr-20").pk)).content.decode())
    assert available_buttons(page) == {}
    assert "pay_purchase_request" not in str(unavailable_items(page))
    url = f"/admin/procurement/purchaserequest/{procurement.request('pr-20').pk}/operation/"
    assert client.get(url + "pay_purchase_request/").status_code == 404
