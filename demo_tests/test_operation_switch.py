"""``@operation(enabled_by=SETTING)``: an operation that exists only while a setting is on.

The demo's ``hold_order`` is switched by ``ORDERS_ENABLE_HOLD`` (off by default, so the
default catalog and every golden file are unchanged). Switched on, it is everywhere at
once — catalog, affordances, REST route, execution — without a restart.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.models import AuditRecord
from demo_tests.conftest import Demo

Api = Callable[[str], APIClient]


def names(client: APIClient) -> list[str]:
    return [op["name"] for op in client.get("/api/operations/").json()["operations"]]


def test_the_switch_is_a_known_setting_and_off_by_default(demo: Demo, api: Api):
    assert get_catalog().lookup("hold_order") is None
    assert "hold_order" not in names(api("admin"))
    order = demo.order("demo-05")
    response = api("support").post(f"/api/orders/{order.pk}/hold/", {"note": "x"}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert demo.order("demo-05").version == order.version


def test_switched_on_it_joins_the_catalog_affordances_and_execution(demo: Demo, api: Api):
    order = demo.order("demo-05")
    with override_settings(ORDERS_ENABLE_HOLD=True):
        # Declared last, listed last among the orders' operations.
        assert [n for n in names(api("support")) if n.endswith("_order")][-1] == "hold_order"
        assert "hold_order" not in names(api("alice"))  # needs orders.confirm_order
        representation = api("support").get(f"/api/orders/{order.pk}/").json()
        [hold] = [a for a in representation["affordances"] if a["name"] == "hold_order"]
        assert hold["target"].endswith(f"/api/orders/{order.pk}/hold/")
        response = api("support").post(
            hold["target"],
            {"note": "Address check", "expectedVersion": hold["validForVersion"]},
            format="json",
        )
        assert response.status_code == 200, response.json()
        assert response.json()["status"] == "confirmed"
        assert response.json()["version"] == order.version + 1
        [record] = AuditRecord.objects.filter(operation_name="hold_order")
        assert (record.source_state, record.target_state) == ("confirmed", "confirmed")
        assert record.arguments == {"note": "Address check"}
        pending = demo.order("demo-01")
        refused = api("support").post(
            f"/api/orders/{pending.pk}/hold/", {"note": "x"}, format="json"
        )
        assert (refused.status_code, refused.json()["reason"]) == (409, "not_confirmed")
    assert get_catalog().lookup("hold_order") is None  # switched off again with the setting


@pytest.mark.parametrize("value", [False, 0, ""])
def test_a_falsy_setting_keeps_it_out(demo: Demo, api: Api, value: object):
    with override_settings(ORDERS_ENABLE_HOLD=value):
        assert "hold_order" not in names(api("admin"))


def extra_actions(client: APIClient, pk: int) -> list[tuple[str, str]]:
    """The "Extra Actions" menu: each entry's route and label (the operation's title)."""
    html = client.get(f"/api/orders/{pk}/", HTTP_ACCEPT="text/html").content.decode()
    menu = re.search(r'aria-labelledby="extra-actions-menu">(.*?)</ul>', html, flags=re.S)
    assert menu is not None, "no Extra Actions menu"
    return re.findall(r'/api/orders/\d+/(\w+)/">([^<]+)</a>', menu[1])


CANCEL, CONFIRM, HOLD = (
    ("cancel", "Cancel order"),
    ("confirm", "Confirm order"),
    ("hold", "Hold order"),
)


def test_the_browsable_apis_extra_actions_are_the_callers_operations(demo: Demo, api: Api) -> None:
    pk = demo.orders["demo-05"].pk
    assert extra_actions(api("alice"), pk) == [CANCEL]
    assert extra_actions(api("support"), pk) == [CANCEL, CONFIRM]
    with override_settings(ORDERS_ENABLE_HOLD=True):
        assert extra_actions(api("support"), pk) == [CANCEL, CONFIRM, HOLD]
        assert extra_actions(api("alice"), pk) == [CANCEL]
