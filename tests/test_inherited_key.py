"""A multi-table-inheritance child is keyed by its parent link, a ``OneToOneField``
whose values are the parent's integer keys: the key schema and the key parsing follow
that field to the parent's key, on every face alike.

(They were decided twice: the catalog said the child's id was text, the filters and
related inputs said integer, and MCP refused ``{"vehicleId": 5}``.)
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.resources import registered_resources
from affordances.schemas import key_schema
from tests.generic import inheritance_api
from tests.generic.inheritance import Asset, Vehicle


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": inheritance_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(inheritance_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.inheritance_api"):
            yield


@pytest.fixture
def api(project: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


def _call(client: APIClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = client.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 200, response.content
    return dict(response.json()["result"])


def test_the_child_key_is_the_parent_key_in_every_schema(project):
    catalog = get_catalog()
    (resource,) = registered_resources()
    integer = {"type": "integer", "minimum": 1}
    assert resource.id_schema == key_schema(Vehicle) == key_schema(Asset) == integer
    for name in ("get_vehicle", "start_vehicle"):
        argument = catalog.lookup(name).input_schema["properties"]["vehicleId"]
        assert {k: v for k, v in argument.items() if k != "description"} == integer


def test_every_face_takes_the_child_by_its_integer_key(api):
    vehicle = Vehicle.objects.create(label="van")
    Asset.objects.create(label="not a vehicle")  # a parent key with no child

    read = _call(api, "get_vehicle", {"vehicleId": vehicle.pk})
    assert read["isError"] is False, read
    assert read["structuredContent"]["id"] == vehicle.pk
    assert api.get(f"/api/vehicles/{vehicle.pk}/").json()["id"] == vehicle.pk

    started = _call(api, "start_vehicle", {"vehicleId": vehicle.pk})
    assert started["isError"] is False, started
    assert Vehicle.objects.get().phase == "moving"
    assert api.get(f"/api/vehicles/{vehicle.pk}/").json()["version"] == 2


@pytest.mark.parametrize("key", ["1.5", "abc", "-1", "0", "01", str(2**63)])
def test_a_malformed_child_key_is_a_missing_object(api, key):
    Vehicle.objects.create()
    assert api.get(f"/api/vehicles/{key}/").status_code == 404
    assert api.post(f"/api/vehicles/{key}/start/", {}, format="json").status_code == 404
