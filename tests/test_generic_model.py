"""The affordances app is generic: any django-fsm model registered in settings is served.

``tests/generic`` holds a ``Ticket`` the app knows nothing about; registering it in
``AFFORDANCES["MODELS"]`` is all it takes to get its operations into the catalog.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import override_settings
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

import affordances
from affordances.catalog import canonical_json, get_catalog
from tests.generic.models import Ticket

TICKET_OPERATIONS = [
    "get_ticket",
    "list_tickets",
    "close_ticket",
    "escalate_ticket",
    "explode_ticket",
]


@pytest.fixture
def with_ticket() -> Iterator[None]:
    models = {**django_settings.AFFORDANCES["MODELS"], "generic.Ticket": {}}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        yield


def _names(operations) -> list[str]:
    return [op.name for op in operations]


@pytest.fixture
def alice(db: None) -> None:
    get_user_model().objects.create_user("alice", password="x")


def _fresh(username: str):
    # A fresh user object: has_perm caches permissions on the instance.
    return get_user_model().objects.get(username=username)


def _grant_escalate(username: str) -> None:
    permission = Permission.objects.get(
        content_type__app_label="generic", codename="escalate_ticket"
    )
    _fresh(username).user_permissions.add(permission)


def test_ticket_is_not_in_the_catalog_unless_registered():
    assert "generic.Ticket" not in django_settings.AFFORDANCES["MODELS"]
    assert not [name for name in _names(get_catalog()) if "ticket" in name]


def test_registering_ticket_adds_its_reads_and_transitions(with_ticket):
    assert _names(get_catalog())[-len(TICKET_OPERATIONS) :] == TICKET_OPERATIONS


@pytest.mark.parametrize(
    ("name", "source", "target"),
    [
        ("close_ticket", ["open", "escalated"], ["closed"]),
        ("escalate_ticket", ["open"], ["escalated", "closed"]),
        ("explode_ticket", ["*"], ["open"]),
    ],
)
def test_ticket_transitions_state_their_sources_and_targets(with_ticket, name, source, target):
    document = get_catalog().documents[name]

    assert document["transition"] == {"field": "state", "source": source, "target": target}
    assert document["kind"] == "transition"
    assert document["method"] == "POST"
    assert document["resource"] == "ticket"
    assert document["id"] == f"urn:example:operation:{name.replace('_', '-')}:v1"


@pytest.mark.parametrize(
    ("name", "title", "method"),
    [
        ("close_ticket", "Close ticket", "close"),
        ("escalate_ticket", "Escalate ticket", "escalate"),
        ("explode_ticket", "Explode ticket", "explode"),
    ],
)
def test_ticket_prose_comes_from_its_declarations(with_ticket, name, title, method):
    document = get_catalog().documents[name]

    assert document["title"] == title
    assert document["description"] == inspect.cleandoc(getattr(Ticket, method).__doc__)
    assert document["description"]


def test_ticket_reads_bind_a_ticket_id(with_ticket):
    documents = get_catalog().documents

    assert documents["get_ticket"]["kind"] == "read"
    assert documents["get_ticket"]["annotations"]["readOnlyHint"] is True
    assert "transition" not in documents["get_ticket"]
    assert documents["get_ticket"]["inputSchema"]["required"] == ["ticketId"]
    assert documents["list_tickets"]["kind"] == "read"


def test_escalate_input_schema_has_an_integer_level_from_1_to_3(with_ticket):
    schema = get_catalog().documents["escalate_ticket"]["inputSchema"]
    validator = Draft202012Validator(json.loads(canonical_json(schema), parse_float=Decimal))

    assert schema["properties"]["level"]["type"] == "integer"
    assert schema["properties"]["level"]["minimum"] == 1
    assert schema["properties"]["level"]["maximum"] == 3
    assert schema["required"] == ["ticketId", "level"]
    assert "expectedVersion" in schema["properties"]
    assert validator.is_valid({"ticketId": 1, "level": 2})
    assert not validator.is_valid({"ticketId": 1, "level": 0})
    assert not validator.is_valid({"ticketId": 1, "level": 4})
    assert not validator.is_valid({"ticketId": 1, "level": 1.5})
    assert not validator.is_valid({"ticketId": 1})


def test_ticket_schemas_pass_the_2020_12_meta_schema(with_ticket):
    documents = get_catalog().documents

    for name in TICKET_OPERATIONS:
        Draft202012Validator.check_schema(documents[name]["inputSchema"])
        Draft202012Validator.check_schema(documents[name]["outputSchema"])


@pytest.mark.django_db
def test_escalate_permission_hides_it_from_a_user_without_it(alice, with_ticket):
    visible = _names(get_catalog().for_user(_fresh("alice")))

    assert "escalate_ticket" not in visible
    # Transitions without a permission are open to every authenticated caller.
    assert [name for name in visible if name.endswith(("ticket", "tickets"))] == [
        "get_ticket",
        "list_tickets",
        "close_ticket",
        "explode_ticket",
    ]


@pytest.mark.django_db
def test_escalate_permission_shows_it_to_a_user_with_it(alice, with_ticket):
    _grant_escalate("alice")

    visible = _names(get_catalog().for_user(_fresh("alice")))

    assert "escalate_ticket" in visible
    assert visible == TICKET_OPERATIONS


def test_escalate_permission_over_the_rest_face(alice, with_ticket):
    client = APIClient()
    client.force_authenticate(_fresh("alice"))
    before_list = client.get("/api/operations/")
    before_one = client.get("/api/operations/escalate_ticket/")
    _grant_escalate("alice")
    client.force_authenticate(_fresh("alice"))
    after_list = client.get("/api/operations/")
    after_one = client.get("/api/operations/urn:example:operation:escalate-ticket:v1/")

    assert "escalate_ticket" not in [e["name"] for e in before_list.json()["operations"]]
    assert before_one.status_code == 404
    assert "escalate_ticket" in [e["name"] for e in after_list.json()["operations"]]
    assert after_one.status_code == 200
    assert after_one.json()["transition"]["target"] == ["escalated", "closed"]
    assert before_list["ETag"] != after_list["ETag"]


def test_the_affordances_package_never_mentions_the_test_app():
    # The spirit of `grep -r "generic\|Ticket" affordances/`: no reference to the test
    # app, its model or its permission. (The English adjective "generic" in prose is
    # not a reference, so only code-like uses of the word are searched for.)
    package = Path(affordances.__file__).parent
    reference = re.compile(
        r"Ticket|ticket|escalat|tests\.generic|\bgeneric\.|[\"']generic[\"']|\bgeneric_"
    )
    found = []
    files = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            if reference.search(line):
                found.append(f"{path.relative_to(package.parent)}:{number}: {line.strip()}")

    assert len(files) > 10  # the scan really read the package
    assert found == []
