"""What the rows of one request share cannot change (issue 51): the state's refusals and
their list, a row's ``arguments``, the constraints; the lists are worked out by stable
keys (a state, a spelling, a primary key), never by an object's ``id()``."""

from __future__ import annotations

import ast
import copy
import importlib
import json
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import RequestFactory, override_settings
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from affordances.frozen import FrozenDict, FrozenList
from tests.generic import api as ticket_app
from tests.generic.models import Ticket

PACKAGE = Path(__file__).resolve().parent.parent / "affordances"


@pytest.fixture
def tickets_project(db: None) -> Iterator[None]:
    registration = {**ticket_app.REGISTRATION, "PAGE_SIZE": 50, "MAX_PAGE_SIZE": 100}
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": registration}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


def _rows(states: list[str]) -> list[dict[str, Any]]:
    users = get_user_model().objects
    user = users.create_user("esc", password="x")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="generic", codename="escalate_ticket")
    )
    user = users.get(pk=user.pk)
    tickets = []
    for state in states:
        ticket = Ticket.objects.create(assignee="ann")
        Ticket.objects.filter(pk=ticket.pk).update(state=state)
        tickets.append(Ticket.objects.get(pk=ticket.pk))
    request = Request(RequestFactory().get("/v2/tickets/"))
    request.user = user
    return list(ticket_app.TicketSerializer(tickets, many=True, context={"request": request}).data)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("a", 2),
        lambda d: d.__delitem__("a"),
        lambda d: d.update(a=2),
        lambda d: d.pop("a"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("b", 1),
        lambda d: d.clear(),
        lambda d: d.__ior__({"b": 1}),
    ],
)
def test_a_frozen_dict_refuses_every_change(change):
    frozen = FrozenDict({"a": 1})
    with pytest.raises(TypeError):
        change(frozen)
    assert frozen == {"a": 1}


@pytest.mark.parametrize(
    "change",
    [
        lambda items: items.append(2),
        lambda items: items.extend([2]),
        lambda items: items.insert(0, 2),
        lambda items: items.remove(1),
        lambda items: items.pop(),
        lambda items: items.clear(),
        lambda items: items.sort(),
        lambda items: items.reverse(),
        lambda items: items.__setitem__(0, 2),
        lambda items: items.__delitem__(0),
        lambda items: items.__iadd__([2]),
        lambda items: items.__imul__(2),
    ],
)
def test_a_frozen_list_refuses_every_change(change):
    frozen = FrozenList([1])
    with pytest.raises(TypeError):
        change(frozen)
    assert frozen == [1]


def test_frozen_values_are_written_and_copied_as_plain_ones():
    value = FrozenDict({"list": FrozenList([FrozenDict({"a": 1})]), "n": 1.0})
    plain = {"list": [{"a": 1}], "n": 1.0}
    assert orjson.dumps(value) == orjson.dumps(plain)
    assert json.dumps(value) == json.dumps(plain)
    assert JSONRenderer().render(value) == JSONRenderer().render(plain)
    for copied in (
        value.copy(),
        copy.copy(value),
        copy.deepcopy(value),
        pickle.loads(pickle.dumps(value)),
    ):
        assert type(copied) is dict and copied == plain
        copied["n"] = 2  # a copy is the caller's own
    deep = copy.deepcopy(value)
    assert type(deep["list"]) is list and type(deep["list"][0]) is dict
    assert value["n"] == 1.0


def test_what_rows_share_cannot_change_and_what_is_a_rows_own_can(tickets_project):
    first, second = _rows(["closed", "closed"])
    shared = first["unavailableAffordances"]
    assert shared is second["unavailableAffordances"]
    with pytest.raises(TypeError):
        shared.append({"name": "x"})
    with pytest.raises(TypeError):
        shared[0]["reason"] = "changed"
    assert second["unavailableAffordances"][0]["reason"] != "changed"


def test_a_rows_arguments_and_constraints_are_shared_read_only(tickets_project):
    (row,) = _rows(["open"])
    entries = row["affordances"]
    assert entries and all(e["arguments"] is entries[0]["arguments"] for e in entries)
    with pytest.raises(TypeError):
        entries[0]["arguments"]["ticketId"] = 0
    for entry in entries:
        if "constraints" in entry:
            with pytest.raises(TypeError):
                entry["constraints"]["properties"] = {}
    # The row's own list and entries are its own.
    entries[0]["target"] = "changed"
    entries.append({"name": "mine"})


@pytest.mark.parametrize("module", ["entries.py", "evaluation.py", "rest/renderers.py"])
def test_no_per_request_work_is_keyed_by_an_objects_id(module):
    path = PACKAGE / module
    calls = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"
    ]
    assert calls == []
