"""HTTP: strong ETags unique per representation, and the OpenAPI document private by
default (issue 36, findings 7 and 8).

A strong validator names one representation (RFC 9110 §8.8.1): the catalog as JSON, as
HAL-FORMS and as HTML, the OpenAPI document as YAML and as JSON, a protocol schema as
``application/schema+json`` and as ``application/json`` each have their own ``ETag``; a
tag of one is no match for another (200, not 304), and still a match for its own (304).

``GET /api/schema/`` answers a caller without credentials as every URL of the app's
views does (401, a problem document, the authentication classes' challenge), unless the
project mounts ``SchemaView.as_view(public=True)``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient

from tests.generic import lending_api

JSON = "application/json"
HAL_FORMS = "application/prs.hal-forms+json"
HTML = "text/html"
OPENAPI_JSON = "application/vnd.oai.openapi+json"
OPENAPI_YAML = "application/vnd.oai.openapi"
SCHEMA_JSON = "application/schema+json"


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": lending_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(lending_api)
        with override_settings(ROOT_URLCONF="tests.generic.lending_api"):
            yield


@pytest.fixture
def api(project: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


def _etag(api: APIClient, path: str, accept: str) -> str:
    response = api.get(path, HTTP_ACCEPT=accept)
    assert response.status_code == 200, (accept, response.content[:200])
    return response["ETag"]


@pytest.mark.parametrize(
    ("path", "accepts"),
    [
        ("/api/operations/", [JSON, HAL_FORMS, HTML]),
        ("/api/operations/list_loans/", [JSON, HAL_FORMS, HTML]),
        ("/api/schemas/affordance-entry.schema.json", [SCHEMA_JSON, JSON]),
        ("/api/schema/", [OPENAPI_YAML, OPENAPI_JSON]),
    ],
)
def test_each_representation_has_its_own_strong_etag(api, path, accepts):
    tags = {accept: _etag(api, path, accept) for accept in accepts}
    assert len(set(tags.values())) == len(accepts), tags
    for accept, tag in tags.items():
        assert not tag.startswith("W/")
        # Its own tag: not modified.
        again = api.get(path, HTTP_ACCEPT=accept, HTTP_IF_NONE_MATCH=tag)
        assert again.status_code == 304, accept
        assert again["ETag"] == tag
        # Another representation's tag: the full answer, with this one's tag.
        for other, other_tag in tags.items():
            if other == accept:
                continue
            answer = api.get(path, HTTP_ACCEPT=accept, HTTP_IF_NONE_MATCH=other_tag)
            assert answer.status_code == 200, (accept, other)
            assert answer["ETag"] == tag


@pytest.mark.parametrize(
    "path",
    [
        "/api/operations/",
        "/api/operations/list_loans/",
        "/api/schemas/affordance-entry.schema.json",
        "/api/schema/",
    ],
)
def test_conditional_requests_are_evaluated_as_django_does(api, path):
    """RFC 9110 §13.2.2 as Django evaluates it: If-None-Match is a list, weak-compared,
    ``*`` matches; a 304 keeps the validators and ``Vary``; a read's failed If-Match is
    a 412 problem document (it was ignored when the comparison was hand-written)."""
    first = api.get(path)
    tag = first["ETag"]
    for header in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        again = api.get(path, HTTP_IF_NONE_MATCH=header)
        assert again.status_code == 304, header
        assert again.content == b""
        assert again["ETag"] == tag
        assert again.get("Vary") == first.get("Vary")
        assert again.get("Cache-Control") == first.get("Cache-Control")
    assert api.get(path, HTTP_IF_NONE_MATCH='"other"').status_code == 200
    assert api.get(path, HTTP_IF_MATCH=tag).status_code == 200
    assert api.get(path, HTTP_IF_MATCH="*").status_code == 200
    # Without Accept: the OpenAPI document's default is YAML, a problem is JSON still.
    refused = api.get(path, HTTP_IF_MATCH='"other"')
    assert refused.status_code == 412
    assert refused["Content-Type"].startswith("application/problem+json")
    assert refused.json()["code"] == "precondition_failed"


def test_the_format_parameter_picks_a_representation_and_its_tag(api):
    yaml_tag = _etag(api, "/api/schema/", OPENAPI_YAML)
    as_json = api.get("/api/schema/?format=json", HTTP_IF_NONE_MATCH=yaml_tag)
    assert as_json.status_code == 200
    assert as_json["ETag"] != yaml_tag
    assert (
        api.get("/api/schema/?format=json", HTTP_IF_NONE_MATCH=as_json["ETag"]).status_code == 304
    )


def test_the_openapi_document_is_401_without_credentials(project):
    response = APIClient().get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON)
    assert response.status_code == 401
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["code"] == "not_authenticated"
    # The challenge of the first authentication class (simplejwt's, in these settings).
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    # As every other URL of the app's views.
    assert APIClient().get("/api/loans/").status_code == 401


def test_the_openapi_document_is_served_to_a_caller_with_credentials(api):
    response = api.get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON)
    assert response.status_code == 200
    assert any(path.endswith("/loans/") for path in response.json()["paths"])


def test_a_project_may_mount_a_public_document(project):
    response = APIClient().get("/api/public-schema/", HTTP_ACCEPT=OPENAPI_JSON)
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")
