"""Affordance entries are written in one place (``affordances.entries``): every face
answers the same entries, and MCP does not depend on the REST face's serializer mixin.

On the library's own test models (tests/generic/keys.py), wired as a project would.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework import serializers
from rest_framework.test import APIClient

from affordances.entries import CATALOG_KEYS, Shape, list_schemas, shaped_schema
from affordances.mcp.tools import output_schema
from affordances.operations import representation_schema
from affordances.rest import ResourceUrlField
from tests import mcp_wire
from tests.generic import keys_api
from tests.generic.keys import Locker, Voucher

HAL_FORMS = "application/prs.hal-forms+json"


class PlainVoucherSerializer(serializers.ModelSerializer):
    """A registered serializer that does not mix in ``AffordancesMixin``."""

    url = ResourceUrlField()

    class Meta:
        model = Voucher
        fields = ["id", "url", "phase", "version"]
        read_only_fields = fields


PLAIN = {
    **keys_api.REGISTRATIONS,
    "generic.Voucher": {"SERIALIZER": "tests.test_entries.PlainVoucherSerializer"},
}


def _project(registrations: dict[str, Any]) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": registrations}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(keys_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.keys_api"):
            yield


@pytest.fixture
def project(db: None) -> Iterator[None]:
    yield from _project(keys_api.REGISTRATIONS)


@pytest.fixture
def plain_project(db: None) -> Iterator[None]:
    yield from _project(PLAIN)


def _root() -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


def _api() -> APIClient:
    client = APIClient()
    client.force_authenticate(_root())
    return client


def _mcp(client: APIClient, path: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return mcp_wire.result(client, path, method, params)


def _get_voucher(client: APIClient, voucher: Voucher) -> dict[str, Any]:
    result = _mcp(
        client,
        "/mcp",
        "tools/call",
        {"name": "get_voucher", "arguments": {"voucherId": str(voucher.pk)}},
    )
    assert result["isError"] is False, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def test_every_face_answers_the_same_entries(project):
    client = _api()
    voucher = Voucher.objects.create()
    rest = client.get(f"/api/vouchers/{voucher.pk}/").json()
    compact = client.get(f"/api/vouchers/{voucher.pk}/?affordances=compact").json()
    mcp = _get_voucher(client, voucher)
    hal = client.get(f"/api/vouchers/{voucher.pk}/", HTTP_ACCEPT=HAL_FORMS).json()

    [entry] = rest["affordances"]
    assert entry == {
        "operation": "urn:example:operation:redeem-voucher:v1",
        "name": "redeem_voucher",
        "title": "Redeem voucher",
        "method": "POST",
        "target": f"http://testserver/api/vouchers/{voucher.pk}/redeem/",
        "arguments": {"voucherId": str(voucher.pk)},
        "constraints": {},
        "validForVersion": 1,
    }
    assert mcp["affordances"] == rest["affordances"]
    assert compact["affordances"] == [
        {
            key: value
            for key, value in entry.items()
            if key not in CATALOG_KEYS and key != "constraints"
        }
    ]
    # HAL-FORMS: one template per entry, sent to the entry's target.
    assert list(hal["_templates"]) == ["redeem_voucher"]
    assert hal["_templates"]["redeem_voucher"]["target"] == entry["target"]
    # The admin's panel lists the entry's operation.
    admin = Client()
    admin.force_login(get_user_model().objects.get(username="root"))
    page = admin.get(f"/keys-admin/generic/voucher/{voucher.pk}/change/")
    assert page.status_code == 200
    assert "Redeem voucher" in page.content.decode()


def test_mcp_writes_the_entries_when_the_serializer_does_not(plain_project):
    client = _api()
    voucher = Voucher.objects.create()
    mcp = _get_voucher(client, voucher)
    assert [entry["name"] for entry in mcp["affordances"]] == ["redeem_voucher"]
    assert mcp["affordances"][0]["validForVersion"] == 1
    assert mcp["unavailableAffordances"] == []
    # In every MCP profile's shape, lists included.
    listed = _mcp(client, "/mcp", "tools/call", {"name": "list_vouchers", "arguments": {}})
    [item] = listed["structuredContent"]["results"]
    assert item["affordances"] == mcp["affordances"]
    # After a run, the entries say what applies now.
    run = _mcp(
        client,
        "/mcp",
        "tools/call",
        {"name": "redeem_voucher", "arguments": {"voucherId": str(voucher.pk)}},
    )
    body = run["structuredContent"]
    assert body["phase"] == "redeemed"
    assert body["affordances"] == []
    assert [entry["name"] for entry in body["unavailableAffordances"]] == ["redeem_voucher"]


def test_the_lists_schema_in_each_shape_comes_from_one_place(project):
    full = list_schemas(Shape.FULL)
    compact = list_schemas(Shape.COMPACT)
    assert list_schemas(Shape.NONE) == {}
    for name in ("affordances", "unavailableAffordances"):
        full_keys = set(full[name]["items"]["properties"])
        compact_keys = set(compact[name]["items"]["properties"])
        assert compact_keys == full_keys - set(CATALOG_KEYS)
    resource = Locker  # the catalog's representation schema adds the full lists
    from affordances.catalog import get_catalog

    schema = representation_schema(get_catalog().registered(resource))
    assert {k: schema["properties"][k] for k in full} == full
    # MCP's output schemas are the same schema in the profile's shape.
    for shape in Shape:
        success = output_schema(schema, shape=shape)["anyOf"][0]
        assert success == shaped_schema(schema, shape)
        properties = success["properties"]
        assert {k: properties[k] for k in list_schemas(shape)} == list_schemas(shape)
        assert ("affordances" in properties) is (shape is not Shape.NONE)
