"""One registration drives every face: a project wired only from the README.

``tests.generic.api`` wires the tests' ``Ticket`` as a new project would — its own URL
prefixes, no ``EXCEPTION_HANDLER``, a model without ``FSMModelMixin``, a registered
``QUERYSET`` that hides some tickets: REST, MCP and ``perform`` see exactly the same
objects. (The demo's orders, checked the same way for every role of docs/demo.md#orders, are in
demo_tests/test_one_registration.py.)
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django_fsm import FSMModelMixin
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import AuditRecord
from affordances.problems import Problem
from tests.generic import api as generic_api
from tests.generic.models import Ticket

MCP_VERSION = "2025-11-25"


# --- helpers ------------------------------------------------------------------------


def _bearer(user: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(user)}"}


def _rest_ids(client: Client, path: str, headers: dict[str, str]) -> list[int]:
    """Every id of a REST list, following its `next` links to the end."""
    ids: list[int] = []
    url: str | None = path
    while url is not None:
        response = client.get(url, **headers)
        assert response.status_code == 200, response.content
        body = response.json()
        ids += [item["id"] for item in body["results"]]
        url = body["next"]
    return ids


def _mcp_call(client: Client, path: str, headers: dict[str, str], name: str, arguments: dict):
    response = client.post(
        path,
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        ),
        content_type="application/json",
        HTTP_MCP_PROTOCOL_VERSION=MCP_VERSION,
        **headers,
    )
    assert response.status_code == 200, response.content
    return response.json()["result"]


def _mcp_ids(client: Client, path: str, headers: dict[str, str], tool: str) -> list[int]:
    ids: list[int] = []
    page = 1
    while True:
        result = _mcp_call(client, path, headers, tool, {"page": page})
        assert result["isError"] is False, result
        ids += [item["id"] for item in result["structuredContent"]["results"]]
        if result["structuredContent"]["next"] is None:
            return ids
        page += 1


def _performable(operation_name: str, user: Any, pks: list[int]) -> list[int]:
    """The ids ``perform`` gets past its visibility check on (a stale version: nothing runs)."""
    operation = get_catalog().lookup(operation_name)
    reached = []
    for pk in pks:
        try:
            perform(
                operation=operation,
                pk=pk,
                user=user,
                arguments={},
                via="api",
                represent=lambda obj: {"id": obj.pk},
                expected_version=10**6,
            )
        except Problem as problem:
            if problem.code != "not_found":
                reached.append(pk)
        else:  # pragma: no cover - a stale version never runs
            raise AssertionError("a stale version ran")
    return reached


# --- the ticket project ---------------------------------------------------------------


@pytest.fixture
def project(db: None) -> Iterator[None]:
    """Only Ticket registered; the URLconf, REST settings and admin of tests.generic.api."""
    rest = {
        key: value
        for key, value in django_settings.REST_FRAMEWORK.items()
        if key != "EXCEPTION_HANDLER"  # the app's views must not need it
    }
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Ticket": generic_api.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances, REST_FRAMEWORK=rest):
        importlib.reload(generic_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def tickets(project: None) -> dict[str, Ticket]:
    return {
        "open": Ticket.objects.create(assignee="ann"),
        "unassigned": Ticket.objects.create(),
        "secret": Ticket.objects.create(assignee=generic_api.SECRET),
        "open2": Ticket.objects.create(assignee="bo"),
        "secret2": Ticket.objects.create(assignee=generic_api.SECRET),
    }


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    users = get_user_model().objects
    return {
        "staff": users.create_user("carol", password="x", is_staff=True),
        "root": users.create_superuser("root", password="x"),
    }


@pytest.mark.parametrize("who", ["staff", "root"])
def test_rest_mcp_and_perform_see_the_same_tickets(tickets, people, who) -> None:
    user = people[who]
    client = Client()
    headers = _bearer(user)
    rest = _rest_ids(client, "/v2/tickets/", headers)
    mcp = _mcp_ids(client, "/agents/mcp", headers, "list_tickets")
    acted = _performable("close_ticket", user, [t.pk for t in tickets.values()])

    assert rest == mcp == acted
    expected = [t.pk for key, t in tickets.items() if who == "root" or "secret" not in key]
    assert rest == sorted(expected)
    # Paging came from the registration (PAGE_SIZE 2), not from any demo number.
    first = client.get("/v2/tickets/", **headers).json()
    assert len(first["results"]) == 2
    largest = client.get("/v2/tickets/?page_size=3", **headers).json()
    assert len(largest["results"]) == min(3, len(expected))  # MAX_PAGE_SIZE 3
    beyond = client.get("/v2/tickets/?page_size=4", **headers)
    assert beyond.status_code == 400
    assert beyond.json()["errors"] == {"page_size": ["An integer from 1 to 3."]}


def test_a_hidden_ticket_is_404_on_rest_mcp_and_hal_forms(tickets, people) -> None:
    client = Client()
    headers = _bearer(people["staff"])
    secret = tickets["secret"].pk
    for accept in ("application/json", "application/prs.hal-forms+json"):
        hidden = client.get(f"/v2/tickets/{secret}/", HTTP_ACCEPT=accept, **headers)
        missing = client.get("/v2/tickets/987654/", HTTP_ACCEPT=accept, **headers)
        assert hidden.status_code == missing.status_code == 404
        assert hidden.content == missing.content
    result = _mcp_call(client, "/agents/mcp", headers, "get_ticket", {"ticketId": secret})
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "not_found"


def test_the_apps_views_answer_problems_without_an_exception_handler(tickets, people) -> None:
    assert "EXCEPTION_HANDLER" not in django_settings.REST_FRAMEWORK
    client = Client()
    headers = _bearer(people["staff"])
    unassigned = tickets["unassigned"].pk

    refused = client.post(f"/v2/tickets/{unassigned}/close/", {}, "application/json", **headers)
    stale = client.post(
        f"/v2/tickets/{unassigned}/close/", {}, "application/json", HTTP_IF_MATCH='"7"', **headers
    )
    missing = client.get("/v2/tickets/987654/", **headers)
    malformed_id = client.post("/v2/tickets/0.5/close/", {}, "application/json", **headers)
    unmatched = client.get("/v2/no-such-collection/", **headers)

    for response, status, code in (
        (refused, 409, "operation_not_available"),
        (stale, 412, "stale_version"),
        (missing, 404, "not_found"),
        (malformed_id, 404, "not_found"),
        (unmatched, 404, "not_found"),
    ):
        assert response.status_code == status, response.content
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["code"] == code
    assert refused.json()["reason"] == "not_assigned"
    assert refused.json()["current"]["id"] == unassigned
    # Outside the app's URLs, the project's own 404 stays.
    assert Client().get("/elsewhere/")["Content-Type"].startswith("text/html")


# --- the admin of a model without FSMModelMixin ----------------------------------------


def _admin(people: dict[str, Any]) -> Client:
    client = Client()
    client.force_login(people["root"])
    return client


def test_an_admin_action_on_a_model_without_fsm_model_mixin_redirects_and_is_audited(
    tickets, people
) -> None:
    assert not issubclass(Ticket, FSMModelMixin)
    ticket = tickets["open"]
    url = f"/generic-admin/generic/ticket/{ticket.pk}/operation/close_ticket/"

    client = _admin(people)
    response = client.post(url, {"expectedVersion": "1"})

    assert response.status_code == 302
    assert response["Location"] == f"/generic-admin/generic/ticket/{ticket.pk}/change/"
    ticket = Ticket.objects.get(pk=ticket.pk)
    assert (ticket.state, ticket.version) == ("closed", 2)
    (record,) = AuditRecord.objects.filter(object_id=str(ticket.pk))
    assert (record.operation_name, record.via, record.version) == ("close_ticket", "admin", 2)
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b"Close ticket: done" in page.content


def test_a_bulk_admin_action_on_such_a_model_reports_each_object(tickets, people) -> None:
    chosen = [tickets["open"].pk, tickets["open2"].pk]
    response = _admin(people).post(
        "/generic-admin/generic/ticket/",
        {"action": "operation_close_ticket", "_selected_action": chosen},
        follow=True,
    )
    assert response.status_code == 200
    assert set(Ticket.objects.filter(pk__in=chosen).values_list("state", flat=True)) == {"closed"}
    assert AuditRecord.objects.filter(operation_name="close_ticket").count() == 2


def test_an_admin_edit_is_one_audit_record_and_versions_stay_gapless(tickets, people) -> None:
    ticket = tickets["unassigned"]
    client = _admin(people)
    edited = client.post(
        f"/generic-admin/generic/ticket/{ticket.pk}/change/", {"assignee": "dee", "_save": "Save"}
    )
    assert edited.status_code == 302, edited.content
    unchanged = client.post(
        f"/generic-admin/generic/ticket/{ticket.pk}/change/", {"assignee": "dee", "_save": "Save"}
    )
    assert unchanged.status_code == 302
    closed = client.post(
        f"/generic-admin/generic/ticket/{ticket.pk}/operation/close_ticket/",
        {"expectedVersion": "2"},
    )
    assert closed.status_code == 302

    records = list(AuditRecord.objects.filter(object_id=str(ticket.pk)).order_by("id"))
    assert [(r.operation_name, r.version) for r in records] == [
        ("edit_ticket", 2),
        ("close_ticket", 3),
    ]
    assert records[0].arguments == {
        "changed": ["assignee"],
        "from": {"assignee": ""},
        "to": {"assignee": "dee"},
    }
    assert (records[0].source_state, records[0].target_state) == ("open", "open")
    assert Ticket.objects.get(pk=ticket.pk).version == 3


# --- MCP's schema pre-check, on the ticket ---------------------------------------------


@pytest.mark.parametrize("ticket_id", ["1", " 1", 1e400, -1, True, None])
def test_mcp_checks_a_tools_arguments_against_its_input_schema_first(
    tickets, people, ticket_id
) -> None:
    ticket = tickets["open"]
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "close_ticket", "arguments": {"ticketId": ticket_id}},
        }
    ).replace("Infinity", "1e400")
    response = Client().post(
        "/agents/mcp",
        body,
        content_type="application/json",
        HTTP_MCP_PROTOCOL_VERSION=MCP_VERSION,
        **_bearer(people["root"]),
    )
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "validation_error"
    assert "ticketId" in result["structuredContent"]["errors"]
    assert Ticket.objects.get(pk=ticket.pk).version == ticket.version
    assert AuditRecord.objects.count() == 0


def test_an_integral_number_is_the_integer_json_schema_says_it_is(tickets, people) -> None:
    pk = tickets["open"].pk
    result = _mcp_call(
        Client(), "/agents/mcp", _bearer(people["root"]), "get_ticket", {"ticketId": float(pk)}
    )
    assert result["isError"] is False
    assert result["structuredContent"]["id"] == pk


def test_the_readme_wired_project_hides_routes_and_refuses_anonymous_callers_alike(
    tickets, people
) -> None:
    # Wired from the README alone (tests.generic.api): a route the caller may not use is
    # Django's 404 for a made-up one, and a caller without credentials gets one 401.
    client = Client()
    headers = _bearer(people["staff"])  # no generic.escalate_ticket
    pk = tickets["open"].pk
    for method in ("GET", "POST", "OPTIONS"):
        for accept in ("application/json", "application/prs.hal-forms+json", "text/html"):
            hidden = client.generic(
                method, f"/v2/tickets/{pk}/escalate/", HTTP_ACCEPT=accept, **headers
            )
            made_up = client.generic(
                method, f"/v2/tickets/{pk}/escalatex/", HTTP_ACCEPT=accept, **headers
            )
            assert hidden.status_code == 404
            assert sorted(hidden.headers.items()) == sorted(made_up.headers.items())
            assert hidden.content == made_up.content
    answers = {
        (response.status_code, response["WWW-Authenticate"], response.content)
        for response in (
            client.generic(method, path)
            for method in ("GET", "POST", "OPTIONS")
            for path in (
                "/v2/",
                f"/v2/tickets/{pk}/",
                f"/v2/tickets/{pk}/escalate/",
                "/v2/nothing/",
            )
        )
    }
    assert len(answers) == 1
    status, challenge, _ = answers.pop()
    assert status == 401 and challenge.startswith("Bearer")
