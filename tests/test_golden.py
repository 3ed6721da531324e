"""What the library writes, for models it knows nothing of, held as reviewed references.

``tests/golden/`` holds, for the tests' own models (``tests/generic``): the catalog of
the ticket project as a superuser sees it, the ticket's HAL-FORMS document in each state
it can reach, its MCP ``tools/list``, and the parcel's catalog (one constraint using
every keyword). Nothing of the demo: editing ``orders/`` cannot move a byte here.

Every comparison goes through :func:`tests.reference.assert_matches_reference`: the
output is written beside its reference (``*.out.json``) and any difference, or a missing
reference, fails. After an intended change, review the diff and copy the output over
the reference; no run regenerates a reference.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from tests.generic import api as ticket_api
from tests.generic import parcels_api
from tests.generic.models import Ticket
from tests.hal_forms_spec import hal_forms_violations
from tests.mcp_wire import Wire
from tests.reference import assert_matches_reference

GOLDEN = Path(__file__).parent / "golden"
HAL_FORMS = "application/prs.hal-forms+json"
TIME_KEYS = {"createdAt", "updatedAt"}


def _project(module: Any, registration: dict[str, Any], model: str) -> Any:
    affordances = {**django_settings.AFFORDANCES, "MODELS": {model: registration}}
    return override_settings(AFFORDANCES=affordances)


@pytest.fixture
def tickets(db: None) -> Iterator[APIClient]:
    with _project(ticket_api, ticket_api.REGISTRATION, "generic.Ticket"):
        importlib.reload(ticket_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield _client()


@pytest.fixture
def parcels(db: None) -> Iterator[APIClient]:
    with _project(parcels_api, parcels_api.REGISTRATION, "generic.Parcel"):
        importlib.reload(parcels_api)
        with override_settings(ROOT_URLCONF="tests.generic.parcels_api"):
            yield _client()


def _client() -> APIClient:
    client = APIClient()
    client.force_authenticate(_root())
    return client


def _root() -> Any:
    users = get_user_model().objects
    return users.filter(username="root").first() or users.create_superuser("root", password="x")


def normalize(value: Any, pk: int) -> Any:
    """Ids, times and the ticket's id in URLs made stable."""
    if isinstance(value, dict):
        return {
            key: "<id>" if key == "id" else normalize(item, pk)
            for key, item in value.items()
            if key not in TIME_KEYS
        }
    if isinstance(value, list):
        return [normalize(item, pk) for item in value]
    if isinstance(value, str):
        return re.sub(rf"/tickets/{pk}/", "/tickets/<id>/", value)
    return value


def test_the_ticket_catalog_equals_its_reference(tickets: APIClient) -> None:
    response = tickets.get("/v2/operations/")
    assert response.status_code == 200, response.content
    assert_matches_reference(response.json(), GOLDEN / "catalog_ticket.json")


def test_the_parcel_catalog_equals_its_reference(parcels: APIClient) -> None:
    response = parcels.get("/api/operations/")
    assert response.status_code == 200, response.content
    assert_matches_reference(response.json(), GOLDEN / "catalog_parcel.json")


# A ticket in each state its transitions reach: open (assigned, so it may close),
# escalated, closed.
STATES = {
    "open": {"assignee": "ann"},
    "escalated": {"assignee": "ann", "state": "escalated"},
    "closed": {"assignee": "ann", "state": "closed"},
}


@pytest.mark.parametrize("state", STATES)
def test_the_tickets_hal_forms_document_per_state_equals_its_reference(
    tickets: APIClient, state: str
) -> None:
    ticket = Ticket.objects.create(**STATES[state])
    response = tickets.get(f"/v2/tickets/{ticket.pk}/", HTTP_ACCEPT=HAL_FORMS)
    assert response.status_code == 200, response.content
    document = response.json()
    assert document["state"] == state
    assert hal_forms_violations(document) == []
    reference = GOLDEN / "hal_forms_ticket" / f"{state}.json"
    assert_matches_reference(normalize(document, ticket.pk), reference)


def test_the_tickets_mcp_tool_list_equals_its_reference(tickets: APIClient) -> None:
    wire = Wire(str(AccessToken.for_user(_root())), path="/agents/mcp")
    assert_matches_reference({"tools": wire.tools()}, GOLDEN / "mcp_tools_ticket.json")
