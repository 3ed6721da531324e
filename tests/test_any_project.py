"""A project's existing DRF code, as it is written (issue 52, items 5, 8 and 9).

``tests/generic/shelves.py``: a related input whose field reads its queryset through
``get_queryset()`` (DRF's documented way to a lazy or per-request one) is described,
checked and looked up through that method, narrowed to what the caller may see; camelCase
inputs without a label are labelled as words on every face, OPTIONS too; a condition or a
guard that is not callable is a system check, not a 500.
"""

from __future__ import annotations

import datetime
import importlib
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.checks import _check_inputs, check_catalog
from tests import mcp_wire
from tests.generic import shelves_api
from tests.generic.shelves import Shelf, Volume


def _registered(registrations: dict[str, Any]) -> Any:
    affordances = {**django_settings.AFFORDANCES, "MODELS": registrations}
    return override_settings(AFFORDANCES=affordances)


@pytest.fixture
def project(db: None) -> Iterator[None]:
    with _registered(shelves_api.REGISTRATIONS):
        importlib.reload(shelves_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.shelves_api"):
            yield


@pytest.fixture
def bob(project: None) -> Any:
    # Not a superuser: sees only the shelves of his room, may use every operation.
    user = get_user_model().objects.create_user("bob", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="generic"))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def shelves(project: None) -> SimpleNamespace:
    return SimpleNamespace(
        mine=Shelf.objects.create(code="a1", room="bob"),
        hidden=Shelf.objects.create(code="z9", room="carol"),
    )


def _volume() -> Volume:
    return Volume.objects.create(title="Dune", pages=412, acquired=datetime.date(2026, 3, 1))


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# --- item 8: a related field's own get_queryset() -------------------------------------


def test_a_related_field_with_its_own_get_queryset_is_no_check_error(project):
    assert [m.id for m in _check_inputs(get_catalog())] == []
    schema = get_catalog().lookup("shelve_volume").input_schema
    assert schema["properties"]["shelf"]["type"] == "integer"
    assert "shelf" in schema["required"]


def test_a_related_field_with_its_own_get_queryset_finds_only_what_the_caller_sees(bob, shelves):
    volume = _volume()
    client = _api(bob)
    url = f"/api/volumes/{volume.pk}/shelve/"
    hidden = client.post(url, {"shelf": shelves.hidden.pk}, format="json")
    missing = client.post(url, {"shelf": 10**6}, format="json")
    assert hidden.status_code == missing.status_code == 400, hidden.content
    assert set(hidden.json()["errors"]) == set(missing.json()["errors"]) == {"shelf"}
    # Over MCP too.
    answer = mcp_wire.result(
        client,
        "/mcp",
        "tools/call",
        {"name": "shelve_volume", "arguments": {"volumeId": volume.pk, "shelf": shelves.hidden.pk}},
    )
    assert answer.get("isError") is True
    assert Volume.objects.get().status == "stored"
    shelved = client.post(url, {"shelf": shelves.mine.pk}, format="json")
    assert shelved.status_code == 200, shelved.content
    assert Volume.objects.get().shelf == shelves.mine


# --- item 9: labels, and conditions or guards that are not callable --------------------


def test_options_labels_camelcase_inputs_as_words_or_by_the_model_fields_verbose_name(bob, shelves):
    client = _api(bob)
    shelve = client.options(f"/api/volumes/{_volume().pk}/shelve/").json()["actions"]["POST"]
    assert shelve["approvedAmount"]["label"] == "Approved amount"
    assert shelve["shelf"]["label"] == "Shelf"
    acquire = client.options("/api/volumes/").json()["actions"]["POST"]
    assert acquire["approvedAmount"]["label"] == "Amount approved"
    assert acquire["acquired"]["label"] == "Acquired"
    # HAL-FORMS prompts say the same.
    hal = client.get("/api/volumes/", headers={"Accept": "application/prs.hal-forms+json"})
    [template] = [t for t in hal.json()["_templates"].values() if t.get("method") == "POST"]
    prompts = {p["name"]: p["prompt"] for p in template["properties"]}
    assert prompts["approvedAmount"] == "Amount approved"


def test_a_condition_or_guard_that_is_not_callable_is_a_check_error(db):
    with _registered(shelves_api.TOTE):
        found = [m for m in check_catalog() if m.id == "affordances.E042"]
    assert len(found) == 2
    text = " ".join(m.msg for m in found)
    assert "condition <django.db.models.fields.PositiveIntegerField: weight>" in text
    assert "guard 'nobody'" in text
