"""URLs as projects write them (issue 52, items 1 and 2).

A project's own ``HyperlinkedModelSerializer`` reverses DRF's default names
(``volume-detail``, ``shelf-detail``): the router names its routes DRF's way outside the
app's namespace too. Wherever the router's URLs are included — at the top, under an
instance and application namespace, under nested includes, under each of DRF's
versioning schemes — every face's links and targets resolve to that place (the request's
own version on REST; MCP, asked outside any version, the first place, or DRF's
``DEFAULT_VERSION``). A hyperlink no URL has, and a layout whose targets cannot be
reversed outside a request, are system checks, never a 500 or a silent null.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.rest.checks import check_rest_face
from tests import mcp_wire
from tests.generic import shelves_urls
from tests.generic.shelves import Shelf, Volume

HAL_FORMS = "application/prs.hal-forms+json"
LAYOUTS = [
    "plain",
    "namespaced",
    "nested",
    "namespace-versioning",
    "url-path-versioning",
    "accept-header-versioning",
]
# Where MCP (no versioned request) links to: the first place the routes are included, or
# DRF's DEFAULT_VERSION in the URL path.
MCP_BASE = {"namespace-versioning": "/api/v1/", "url-path-versioning": "/api/v1/"}


def _registered(registrations: dict[str, Any], **rest: Any) -> Any:
    affordances = {**django_settings.AFFORDANCES, "MODELS": registrations}
    framework = {**django_settings.REST_FRAMEWORK, **rest}
    return override_settings(AFFORDANCES=affordances, REST_FRAMEWORK=framework)


@pytest.fixture(params=LAYOUTS)
def layout(request: pytest.FixtureRequest, db: None) -> Iterator[tuple[str, str]]:
    with _registered(shelves_urls.REGISTRATIONS, DEFAULT_VERSION="v1"):
        urlconf, base = shelves_urls.layouts()[request.param]
        with override_settings(ROOT_URLCONF=urlconf):
            yield request.param, base


@pytest.fixture
def root(db: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root"))
    return client


def _objects() -> tuple[Shelf, Volume]:
    shelf = Shelf.objects.create(code="a1", room="root")
    volume = Volume.objects.create(title="Dune", pages=412, acquired="2026-03-01")
    return shelf, volume


def _targets(entries: list[dict[str, Any]]) -> list[Any]:
    return [entry.get("target") for entry in entries]


def test_every_face_links_where_the_routes_are(layout, root):
    name, base = layout
    shelf, volume = _objects()
    own = f"http://testserver{base}volumes/{volume.pk}/"
    detail = root.get(f"{base}volumes/{volume.pk}/")
    assert detail.status_code == 200, detail.content
    body = detail.json()
    assert body["url"] == own
    assert body["affordances"] and all(
        t and t.startswith(own) for t in _targets(body["affordances"])
    )
    listed = root.get(f"{base}volumes/")
    assert listed.status_code == 200, listed.content
    rows = listed.json()
    rows = rows.get("results", rows) if isinstance(rows, dict) else rows
    assert [row["url"] for row in rows] == [own]
    # HAL-FORMS: the self link and every template's target.
    hal = root.get(f"{base}volumes/{volume.pk}/", headers={"Accept": HAL_FORMS})
    assert hal.status_code == 200, hal.content
    document = hal.json()
    assert document["_links"]["self"]["href"] == own
    targets = [t.get("target") for t in document["_templates"].values()]
    assert targets and all(t and t.startswith(own) for t in targets)
    # The target works as a client follows it.
    shelve = next(e for e in body["affordances"] if e["name"] == "shelve_volume")
    done = root.post(shelve["target"], {"shelf": shelf.pk}, format="json")
    assert done.status_code == 200, done.content
    shelved = done.json()
    assert shelved["shelf"] == f"http://testserver{base}shelves/{shelf.pk}/"
    # MCP, asked outside any version.
    mcp_base = MCP_BASE.get(name, base)
    answer = mcp_wire.result(
        root, "/mcp", "tools/call", {"name": "get_volume", "arguments": {"volumeId": volume.pk}}
    )
    assert answer.get("isError") is not True, answer
    text = json.dumps(answer)
    assert f"http://testserver{mcp_base}volumes/{volume.pk}/" in text
    assert '"target": null' not in text and '"url": null' not in text


def test_every_layout_passes_the_checks(layout):
    assert [m.id for m in check_rest_face()] == []


def test_a_hyperlink_no_url_has_is_a_check_error_not_a_500(db):
    with _registered(shelves_urls.MISNAMED):
        urlconf, _ = shelves_urls.layouts()["plain"]
        with override_settings(ROOT_URLCONF=urlconf):
            found = [m for m in check_rest_face() if m.id == "affordances.E040"]
    [error] = found
    assert "MisnamedLinks" in error.msg and "'url'" in error.msg and "tome-detail" in error.msg


def test_a_url_path_version_without_a_default_is_refused_with_a_hint(db):
    with _registered(shelves_urls.REGISTRATIONS, DEFAULT_VERSION=None):
        urlconf, _ = shelves_urls.layouts()["url-path-versioning"]
        with override_settings(ROOT_URLCONF=urlconf):
            found = [m for m in check_rest_face() if m.id == "affordances.E041"]
    [error] = found
    assert "version" in error.msg and "DEFAULT_VERSION" in error.hint


def test_versions_a_client_writes_are_not_kept_as_cache_keys(root):
    # A version in the path is whatever the client wrote: each target is right for it,
    # and nothing is kept per version (a client cannot grow or churn the paths cache).
    from affordances import routes

    with _registered(shelves_urls.REGISTRATIONS, DEFAULT_VERSION="v1"):
        urlconf, _ = shelves_urls.layouts()["url-path-versioning"]
        with override_settings(ROOT_URLCONF=urlconf):
            _, volume = _objects()
            routes._paths.clear()
            for version in ("v3", "v4", "zz-9"):
                body = root.get(f"/api/{version}/volumes/{volume.pk}/").json()
                own = f"http://testserver/api/{version}/volumes/{volume.pk}/"
                assert body["affordances"] and all(
                    t.startswith(own) for t in _targets(body["affordances"])
                )
            assert not any("v3" in repr(key) or "zz-9" in repr(key) for key in routes._paths)
            assert len(routes._paths) <= 1
