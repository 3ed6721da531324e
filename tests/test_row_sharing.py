"""What the rows of one request share, and what each keeps of its own (issue 41).

A list builds few objects per row (fewer for the garbage collector to walk): a state's
unavailable list is one list for the rows that add no refusal of their own, a constraint
spelled alike on many rows is checked once and is one object, a row's entries share one
``arguments`` object, input fields are built once per input serializer, constraint and
language, and HAL-FORMS rows with the same constraints and version share their form.
These tests hold that sharing to its rules: whatever is shared is equal to what each row
would have alone, nothing of one spelling, language, version or request passes to
another, and a constraint that widens is refused on every row it is spelled on.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import RequestFactory, override_settings
from django.utils import translation
from django.utils.translation import gettext_lazy
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIClient

from affordances import inputs
from affordances.catalog import get_catalog
from affordances.encoding import fast_json
from affordances.entries import AffordanceLists
from affordances.rest.renderers import HalFormsRenderer, HalRenderer, hal_document
from tests.generic import api as ticket_app
from tests.generic import parcels_api
from tests.generic.models import Ticket
from tests.generic.parcels import Parcel

TICKETS = {**ticket_app.REGISTRATION, "PAGE_SIZE": 50, "MAX_PAGE_SIZE": 100}


@pytest.fixture
def tickets_project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": TICKETS}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def parcels_project(db: None) -> Iterator[None]:
    models = {"generic.Parcel": parcels_api.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(parcels_api)
        with override_settings(ROOT_URLCONF="tests.generic.parcels_api"):
            yield


def _escalator() -> Any:
    users = get_user_model().objects
    user = users.create_user("esc", password="x")
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="generic", codename="escalate_ticket")
    )
    return users.get(pk=user.pk)


def _request(user: Any, url: str = "/") -> Request:
    request = Request(RequestFactory().get(url))
    request.user = user
    return request


def _ticket(state: str, assignee: str = "ann") -> Ticket:
    ticket = Ticket.objects.create(assignee=assignee)
    Ticket.objects.filter(pk=ticket.pk).update(state=state)
    return Ticket.objects.get(pk=ticket.pk)


def _ticket_rows(tickets: list[Any], user: Any) -> list[dict[str, Any]]:
    context = {"request": _request(user, "/v2/tickets/")}
    return list(ticket_app.TicketSerializer(tickets, many=True, context=context).data)


# --- a state's unavailable list ----------------------------------------------------------


def test_rows_of_a_state_without_refusals_of_their_own_share_its_unavailable_list(
    tickets_project,
):
    user = _escalator()
    rows = _ticket_rows([_ticket("closed"), _ticket("closed"), _ticket("escalated")], user)
    first, second, escalated = (row["unavailableAffordances"] for row in rows)
    assert first is second and [e["name"] for e in first] == ["close_ticket", "escalate_ticket"]
    assert escalated is not first and [e["name"] for e in escalated] == ["escalate_ticket"]


def test_a_rows_own_refusal_takes_its_place_in_the_catalogs_order(tickets_project):
    """An escalated ticket nobody is assigned to: closing is refused by the ticket (its
    condition), escalating by the state. The row's list is its own, in the catalog's
    order, and the state's shared list is untouched."""
    user = _escalator()
    assigned, unassigned, other = (
        _ticket("escalated"),
        _ticket("escalated", assignee=""),
        _ticket("escalated"),
    )
    rows = _ticket_rows([assigned, unassigned, other], user)
    shared = rows[0]["unavailableAffordances"]
    assert rows[2]["unavailableAffordances"] is shared
    assert [e["name"] for e in shared] == ["escalate_ticket"]
    own = rows[1]["unavailableAffordances"]
    order = [op.name for op in get_catalog().transitions_for(Ticket)]
    assert [e["name"] for e in own] == ["close_ticket", "escalate_ticket"]
    assert [e["name"] for e in own] == [
        name for name in order if name in {"close_ticket", "escalate_ticket"}
    ]
    assert own[0]["reason"] == "not_assigned"
    assert own[1] is shared[0]  # the state's refusal itself, in its place
    # The same rows, one by one, as a detail answers them.
    client = APIClient()
    client.force_authenticate(user)
    for row in rows:
        detail = client.get(f"/v2/tickets/{row['id']}/").json()
        assert detail["unavailableAffordances"] == row["unavailableAffordances"]


def _lists_computed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ids of the objects whose lists are worked out (prepared or one by one)."""
    computed: list[int] = []
    original = AffordanceLists._lists

    def counting(self: AffordanceLists, instance: Any) -> Any:
        computed.append(instance.pk)
        return original(self, instance)

    monkeypatch.setattr(AffordanceLists, "_lists", counting)
    return computed


def test_a_page_is_worked_out_at_once_and_each_row_gets_its_own_lists(tickets_project, monkeypatch):
    """A list serializer's page (a list, or a QuerySet's fetched rows): every row's lists
    are worked out when the first row is written, once each, and each row gets its own —
    what it gets one at a time."""
    user = _escalator()
    tickets = [_ticket("open"), _ticket("escalated", assignee=""), _ticket("closed")]
    one_by_one = [_ticket_rows([ticket], user)[0] for ticket in tickets]
    computed = _lists_computed(monkeypatch)
    queryset = Ticket.objects.filter(pk__in=[t.pk for t in tickets]).order_by("pk")
    for page in (tickets, queryset):
        computed.clear()
        rows = _ticket_rows(page, user)
        assert sorted(computed) == sorted(t.pk for t in tickets)  # once each
        assert json.loads(json.dumps(rows)) == json.loads(json.dumps(one_by_one))


def test_a_list_serializer_writing_other_objects_than_its_own_works_them_out_one_by_one(
    tickets_project, monkeypatch
):
    """Nothing is prepared for objects that are not written: a list serializer handed
    other objects (nested, or to_representation called with another list) gets each
    row's lists as it writes it."""
    user = _escalator()
    own, other = _ticket("open"), _ticket("closed")
    serializer = ticket_app.TicketSerializer(
        [own], many=True, context={"request": _request(user, "/v2/tickets/")}
    )
    computed = _lists_computed(monkeypatch)
    rows = serializer.to_representation([other])
    assert computed == [other.pk]
    assert rows[0]["id"] == other.pk
    assert rows[0] == _ticket_rows([other], user)[0]


def test_a_row_shares_one_arguments_object_between_its_entries(tickets_project):
    user = _escalator()
    row, other = _ticket_rows([_ticket("open"), _ticket("open")], user)
    entries = row["affordances"]
    assert [e["name"] for e in entries] == ["close_ticket", "escalate_ticket", "explode_ticket"]
    assert all(e["arguments"] is entries[0]["arguments"] for e in entries)
    assert entries[0]["arguments"] == {"ticketId": row["id"]}
    assert other["affordances"][0]["arguments"] == {"ticketId": other["id"]}


def test_a_deferred_state_is_read_as_django_fsm_reads_it(tickets_project):
    user = _escalator()
    ids = [_ticket("closed").pk, _ticket("open").pk]
    loaded = _ticket_rows(list(Ticket.objects.filter(pk__in=ids).order_by("pk")), user)
    deferred = list(Ticket.objects.filter(pk__in=ids).order_by("pk").defer("state"))
    assert all("state" not in ticket.__dict__ for ticket in deferred)
    assert _ticket_rows(deferred, user) == loaded


# --- constraints checked once per request --------------------------------------------------


def _lists_with_rule(rule: Any, user: Any) -> AffordanceLists:
    """The affordance lists of parcels with ``dispatch_parcel`` narrowed by ``rule``."""
    catalog = get_catalog()
    found = catalog.lookup("dispatch_parcel")
    spec = dataclasses.replace(found.spec, constraints=rule)
    narrowed = dataclasses.replace(found, spec=spec)
    return AffordanceLists(_request(user), user, catalog.resource_for(Parcel), [narrowed])


def _dispatch(lists: AffordanceLists, parcel: Parcel) -> dict[str, Any]:
    available, unavailable = lists(parcel)
    (entry,) = available or unavailable
    return entry


class Pieces(enum.Enum):
    ONE = 1


def test_a_constraint_spelled_alike_is_one_object_and_each_spelling_its_own(parcels_project):
    root = get_user_model().objects.create_superuser("root", password="x")
    parcels = [Parcel.objects.create() for _ in range(8)]
    # 5 and 5.0 are equal numbers but are written apart; True == 1 in Python, not in JSON.
    spellings = [{"maximum": 5}, {"maximum": 5.0}, {"maximum": 5}, {"enum": [True]}]
    spellings += [{"enum": [1]}, {"maximum": 5.0}]
    # Written alike as JSON, told apart by Python: a tuple for a list, an enum member for
    # its value.
    spellings += [{"enum": (1,)}, {"enum": [Pieces.ONE]}]

    def rule(parcel: Parcel, user: Any) -> dict[str, Any]:
        return {"properties": {"pieces": dict(spellings[parcels.index(parcel)])}}

    lists = _lists_with_rule(rule, root)
    entries = [_dispatch(lists, parcel) for parcel in parcels]
    constraints = [entry.get("constraints") for entry in entries]
    assert constraints[0] is constraints[2]
    assert constraints[1] is constraints[5] and constraints[1] is not constraints[0]
    assert json.dumps(constraints[0]) == '{"properties": {"pieces": {"maximum": 5}}}'
    assert json.dumps(constraints[1]) == '{"properties": {"pieces": {"maximum": 5.0}}}'
    # Python finds {"enum": [True]} == {"enum": [1]}; on an integer input true widens
    # (no boolean is an integer) and 1 narrows: neither verdict is the other's.
    assert spellings[3] == spellings[4]
    assert entries[3]["reason"] == "misconfigured"
    assert entries[4]["constraints"] == {"properties": {"pieces": {"enum": [1]}}}
    for index in (6, 7):
        assert entries[index].get("constraints") is not constraints[4]
        if "constraints" in entries[index]:
            pieces = entries[index]["constraints"]["properties"]["pieces"]
            assert pieces == spellings[index]


def test_a_widening_constraint_is_refused_on_every_row_past_the_kept_spellings(
    parcels_project,
):
    """Each row narrows its own way (a bound from the row), more spellings than a request
    keeps: every row is still checked, and the one that widens is refused."""
    root = get_user_model().objects.create_superuser("root", password="x")
    parcels = [Parcel.objects.create() for _ in range(80)]
    widening = {parcels[70].pk, parcels[3].pk}

    def rule(parcel: Parcel, user: Any) -> dict[str, Any]:
        bound = 1000 if parcel.pk in widening else Decimal(parcel.pk % 50) + Decimal("0.5")
        return {"properties": {"pieces": {"maximum": bound}}}

    lists = _lists_with_rule(rule, root)
    for _ in range(2):  # twice: a second row of each spelling finds what the first left
        for parcel in parcels:
            entry = _dispatch(lists, parcel)
            if parcel.pk in widening:
                assert entry["reason"] == "misconfigured", parcel.pk
            else:
                assert "reason" not in entry, (parcel.pk, entry)
                assert entry["constraints"] == rule(parcel, root)


def test_constraints_checked_in_one_request_are_not_the_next_ones(parcels_project):
    root = get_user_model().objects.create_superuser("root", password="x")
    parcel = Parcel.objects.create()
    bound: dict[str, Any] = {"maximum": 5}

    def rule(parcel: Parcel, user: Any) -> dict[str, Any]:
        return {"properties": {"pieces": dict(bound)}}

    assert "constraints" in _dispatch(_lists_with_rule(rule, root), parcel)
    bound["maximum"] = 500  # widens now: the next request checks it again
    assert _dispatch(_lists_with_rule(rule, root), parcel)["reason"] == "misconfigured"


# --- input fields, once per input serializer, constraint and language ---------------------


class MonthInput(serializers.Serializer):
    # Django's own catalog translates the month names.
    month = serializers.ChoiceField(
        choices=[("1", gettext_lazy("January")), ("2", gettext_lazy("February"))]
    )
    count = serializers.IntegerField(min_value=0, max_value=10)


def test_input_fields_are_built_once_per_constraint_and_language(db):
    with translation.override("en"):
        english = inputs.input_fields(MonthInput, {})
    with translation.override("fr"):
        french = inputs.input_fields(MonthInput, {})
    with translation.override("en"):
        again = inputs.input_fields(MonthInput, {})
    assert english[0].choices == (("1", "January"), ("2", "February"))
    assert french[0].choices == (("1", "janvier"), ("2", "février"))
    assert again == english and again[0] is english[0]  # built once, kept
    # Spellings apart: 5 and 5.0 are one bound, True is not 1 (true is no integer).
    five = inputs.input_fields(MonthInput, {"properties": {"count": {"maximum": 5}}})
    five_point = inputs.input_fields(MonthInput, {"properties": {"count": {"maximum": 5.0}}})
    assert five[1].maximum == five_point[1].maximum == 5 and five[1] is not five_point[1]
    one = inputs.input_fields(MonthInput, {"properties": {"count": {"enum": [1]}}})
    true = inputs.input_fields(MonthInput, {"properties": {"count": {"enum": [True]}}})
    assert one[1].choices == (("1", "1"),) and true[1].choices == ()


def test_input_fields_are_a_new_list_each_time_and_forgotten_with_the_settings(db):
    first = inputs.input_fields(MonthInput, {})
    first.clear()  # a caller's own list
    second = inputs.input_fields(MonthInput, {})
    assert [field.name for field in second] == ["month", "count"]
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES}):
        assert not inputs._FIELDS  # a setting changed: everything derived is forgotten
        assert inputs.input_fields(MonthInput, {})[0] is not second[0]


# --- HAL-FORMS rows share their form ------------------------------------------------------


def test_hal_forms_rows_share_a_form_by_constraints_and_version_and_render_as_alone(
    tickets_project,
):
    """Rows with one version share one form but their target; another version is its
    own: the renderer's document, which shares, is the JSON of the one that does not."""
    user = _escalator()
    tickets = [_ticket("open") for _ in range(4)]
    Ticket.objects.filter(pk=tickets[2].pk).update(version=7)
    tickets = list(Ticket.objects.filter(pk__in=[t.pk for t in tickets]).order_by("pk"))
    data = {"count": 4, "next": None, "previous": None, "results": _ticket_rows(tickets, user)}

    class View:
        model = Ticket

    request = _request(user, "/v2/tickets/")
    rendered = HalFormsRenderer().render(
        data, renderer_context={"view": View(), "request": request}
    )
    alone = hal_document(data, request=request, view=View())
    document = json.loads(rendered)
    assert document == json.loads(json.dumps(alone))
    # Byte for byte, key order too: rows after the first write their forms' JSON again
    # around their own target.
    assert rendered == fast_json(alone)
    # HAL without forms, and a row without a URL (no self link), likewise.
    data["results"][1] = {k: v for k, v in data["results"][1].items() if k != "url"}
    context = {"view": View(), "request": request}
    assert HalRenderer().render(data, renderer_context=context) == fast_json(
        hal_document(data, request=request, view=View(), forms=False)
    )
    assert HalFormsRenderer().render(data, renderer_context=context) == fast_json(
        hal_document(data, request=request, view=View())
    )
    rows = document["_embedded"]["tickets"]
    for row, ticket in zip(rows, tickets, strict=True):
        escalate = row["_templates"]["escalate_ticket"]
        assert escalate["target"].endswith(f"/{ticket.pk}/escalate/")
        assert escalate["properties"][-1]["value"] == str(ticket.version)
    assert [row["_templates"]["escalate_ticket"]["properties"][-1]["value"] for row in rows] == [
        "1",
        "1",
        "7",
        "1",
    ]


def test_hal_forms_pages_orjson_refuses_a_row_of_are_written_the_standard_way(
    tickets_project,
):
    """The renderer writes rows' forms as orjson fragments; a row orjson refuses (an
    integer past 64 bits) makes it write the page the standard way, whole."""
    user = _escalator()
    rows = _ticket_rows([_ticket("open"), _ticket("closed")], user)
    rows[1] = {**rows[1], "huge": 2**70}
    data = {"count": 2, "next": None, "previous": None, "results": rows}

    class View:
        model = Ticket

    request = _request(user, "/v2/tickets/")
    rendered = HalFormsRenderer().render(
        data, renderer_context={"view": View(), "request": request}
    )
    document = json.loads(rendered)
    assert document == json.loads(json.dumps(hal_document(data, request=request, view=View())))
    assert document["_embedded"]["tickets"][1]["huge"] == 2**70
