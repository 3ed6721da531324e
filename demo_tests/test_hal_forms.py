"""HAL-FORMS golden files of the demo's orders (docs/protocol.md#hal-forms), and ``hal_get``
for the demo's other HAL-FORMS tests.

What HAL-FORMS guarantees on any model (valid documents mirroring the JSON, templates
from the evaluation, narrowed inputs, the collection, errors, round trips) is tested on
the library's own shop, in tests/test_hal_forms.py.

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
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from demo_tests.conftest import Demo
from demo_tests.oracle import TRANSITIONS as ORACLE_TRANSITIONS
from tests.hal_forms_spec import hal_forms_violations
from tests.reference import assert_matches_reference

Api = Callable[[str], APIClient]

HAL = "application/prs.hal-forms+json"
GOLDEN_DIR = Path(__file__).parent / "golden" / "hal_forms"

# name → (title, URL segment of its action route)
TRANSITIONS: dict[str, tuple[str, str]] = {
    name: (transition.title, transition.segment) for name, transition in ORACLE_TRANSITIONS.items()
}


def hal_get(client: APIClient, url: str) -> Any:
    response = client.get(url, HTTP_ACCEPT=HAL)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith(HAL)
    return response


def order_url(demo: Demo, key: str) -> str:
    return f"/api/orders/{demo.orders[key].pk}/"


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
