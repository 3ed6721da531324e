"""Every route of the app is named in one place (``affordances.routes``) and lives in the
``affordances`` URL namespace, beside whatever the project names its own URLs."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import NoReverseMatch, reverse
from rest_framework.test import APIClient

from affordances import routes
from affordances.catalog import get_catalog
from tests.generic import clashing_urls, keys_api
from tests.generic.keys import Voucher


@pytest.fixture
def project(db: None) -> Iterator[APIClient]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": keys_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(keys_api)
        importlib.reload(clashing_urls)
        with override_settings(ROOT_URLCONF="tests.generic.clashing_urls"):
            client = APIClient()
            client.force_authenticate(get_user_model().objects.create_superuser("root"))
            yield client


def test_the_apps_routes_are_named_in_its_namespace(project):
    voucher = Voucher.objects.create()
    resource = get_catalog().registered(Voucher)
    assert routes.detail_path(resource, voucher.pk) == f"/api/vouchers/{voucher.pk}/"
    assert routes.list_path(resource) == "/api/vouchers/"
    redeem = get_catalog().lookup("redeem_voucher")
    assert routes.operation_path(redeem, voucher.pk) == f"/api/vouchers/{voucher.pk}/redeem/"
    assert reverse(routes.ENTRY_POINT) == "/api/"
    assert reverse(routes.OPERATION_LIST) == "/api/operations/"
    assert reverse("affordances:voucher-detail", kwargs={"pk": voucher.pk}).startswith("/api/")
    # Outside the namespace, a project URL named like a route (after the router's URLs,
    # which name them DRF's way too) is the project's.
    assert reverse("voucher-detail", kwargs={"pk": voucher.pk}).startswith("/elsewhere/")
    with pytest.raises(NoReverseMatch):
        reverse("operation-list")


def test_the_projects_own_names_change_no_link_target_or_uri(project):
    voucher = Voucher.objects.create()
    client = project
    detail = client.get(f"/api/vouchers/{voucher.pk}/").json()
    assert detail["url"] == f"http://testserver/api/vouchers/{voucher.pk}/"
    assert detail["affordances"][0]["target"].endswith(f"/api/vouchers/{voucher.pk}/redeem/")
    root = client.get("/api/").json()
    assert root["_links"]["vouchers"]["href"] == "http://testserver/api/vouchers/"
    assert root["_links"]["operations"]["href"] == "http://testserver/api/operations/"
    # MCP resource URIs and their templates, resolved back through the namespace.
    body = {"jsonrpc": "2.0", "id": 1, "method": "resources/templates/list", "params": {}}
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    listed = client.post(
        "/mcp", data=json.dumps(body), content_type="application/json", headers=headers
    ).json()
    templates = {t["name"]: t["uriTemplate"] for t in listed["result"]["resourceTemplates"]}
    assert templates["voucher"] == "http://testserver/api/vouchers/{voucherId}/"
    read: dict[str, Any] = {
        **body,
        "method": "resources/read",
        "params": {"uri": detail["url"]},
    }
    answer = client.post(
        "/mcp", data=json.dumps(read), content_type="application/json", headers=headers
    ).json()
    [content] = answer["result"]["contents"]
    assert json.loads(content["text"])["id"] == str(voucher.pk)
    # A project URL with a route's local name is not an object of the app.
    elsewhere = {**read, "params": {"uri": f"http://testserver/elsewhere/{voucher.pk}/"}}
    missing = client.post(
        "/mcp", data=json.dumps(elsewhere), content_type="application/json", headers=headers
    ).json()
    assert "error" in missing


def _rest_checks() -> list[str]:
    from affordances.rest.checks import check_rest_face

    return [message.id for message in check_rest_face() if message.id is not None]


def test_a_urlconf_without_the_routers_urls_is_a_warning(project):
    assert "affordances.W008" not in _rest_checks()
    assert "affordances.W004" not in _rest_checks()
    # The catalog's endpoints included on their own (the old wiring): not namespaced.
    with override_settings(ROOT_URLCONF="tests.generic.catalog_only_urls"):
        found = _rest_checks()
    assert "affordances.W008" in found
    assert "affordances.W004" in found
