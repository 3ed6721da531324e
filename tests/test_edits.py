"""Field edits through the rules (issue 52 item 7): ``edit_{resource}``.

A registration that declares ``EDITABLE_FIELDS`` gets ``PATCH`` on REST and an
``edit_{resource}`` tool on MCP, run by the one execution path the admin's change form
saves through: the object visible through ``QUERYSET`` (hidden is missing), Django's
``change`` permission (a caller without it never sees the edit), the version, the
fields the state leaves editable, the model's validation, one audit record and the
event on commit, idempotency keys. Without the declaration, nothing changes: ``PATCH``
is 405 and there is no tool.

On the tests' ``Ticket`` (``tests.generic.api``): the assignee is editable while the
ticket is open or escalated, not once it is closed.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest
import rules
from django.conf import settings as django_settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, RequestFactory, override_settings
from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework_simplejwt.tokens import AccessToken

from affordances import events
from affordances.admin import AffordanceAdminMixin
from affordances.catalog import get_catalog
from affordances.checks import check_catalog
from affordances.execution import perform
from affordances.mcp import McpView
from affordances.mcp.profiles import FORMS
from affordances.models import AuditRecord
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.problems import Problem
from tests.generic import api as ticket_api
from tests.generic import expenses as expenses_app
from tests.generic.models import Expense, Ticket
from tests.mcp_wire import Wire

EDITABLE = {"open": ["assignee"], "escalated": ["assignee"]}
MCP = "/agents/mcp"


class RecordingBroker:
    """Keeps what is published ("this object changed", on commit)."""

    shared = False
    published: ClassVar[list[events.Event | None]] = []

    def publish(self, topic: str, payload: bytes) -> None:
        self.published.append(events.decode(payload))


def _registration(editable: Any) -> dict[str, Any]:
    registration = dict(ticket_api.REGISTRATION)
    if editable is not None:
        registration["EDITABLE_FIELDS"] = editable
    return registration


@contextmanager
def mounted(editable: Any) -> Iterator[None]:
    """The ticket project (tests.generic.api), its registration declaring ``editable``
    (None: nothing), events recorded."""
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Ticket": _registration(editable)},
        "EVENTS_BROKER": {"BACKEND": "tests.test_edits.RecordingBroker"},
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(ticket_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            RecordingBroker.published.clear()
            yield


@pytest.fixture
def project(db: None) -> Iterator[None]:
    """The ticket project, its registration declaring EDITABLE."""
    with mounted(EDITABLE):
        yield


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    """dee holds ``change_ticket`` (model-wide); vic may see tickets, not change them;
    root is a superuser (the only one who sees the secret tickets)."""
    users = get_user_model().objects
    people = {
        "dee": users.create_user("dee", password="x", is_staff=True),
        "vic": users.create_user("vic", password="x", is_staff=True),
        "root": users.create_superuser("root", password="x"),
    }
    change = Permission.objects.get(content_type__app_label="generic", codename="change_ticket")
    view = Permission.objects.get(content_type__app_label="generic", codename="view_ticket")
    people["dee"].user_permissions.add(change, view)
    people["vic"].user_permissions.add(view)
    return people


@pytest.fixture
def tickets(db: None) -> dict[str, Ticket]:
    return {
        "open": Ticket.objects.create(assignee="ann"),
        "closed": Ticket.objects.create(assignee="ann", state="closed"),
        "secret": Ticket.objects.create(assignee=ticket_api.SECRET),
    }


def _headers(user: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(user)}"}


def _patch(user: Any, pk: Any, body: Any, **headers: str) -> Any:
    return Client().patch(
        f"/v2/tickets/{pk}/",
        json.dumps(body),
        content_type="application/json",
        **_headers(user),
        **headers,
    )


def _names(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["name"] for entry in entries]


def _wire(user: Any) -> Wire:
    return Wire(str(AccessToken.for_user(user)), path=MCP)


# --- REST: PATCH ------------------------------------------------------------------------


def test_patch_changes_the_field_bumps_the_version_and_writes_one_audit_record(
    project, people, tickets, django_capture_on_commit_callbacks
) -> None:
    ticket = tickets["open"]
    with django_capture_on_commit_callbacks(execute=True):
        response = _patch(people["dee"], ticket.pk, {"assignee": "bo", "expectedVersion": 1})
    assert response.status_code == 200, response.content
    assert response["ETag"] == '"2"'
    body = response.json()
    assert (body["assignee"], body["version"], body["state"]) == ("bo", 2, "open")
    assert "edit_ticket" in _names(body["affordances"])  # valid for the new version
    stored = Ticket.objects.get(pk=ticket.pk)
    assert (stored.assignee, stored.version) == ("bo", 2)

    (record,) = AuditRecord.objects.filter(object_id=str(ticket.pk))
    assert (record.operation_name, record.operation) == (
        "edit_ticket",
        get_catalog().lookup("edit_ticket").urn,
    )
    assert record.arguments == {
        "changed": ["assignee"],
        "from": {"assignee": "ann"},
        "to": {"assignee": "bo"},
    }
    assert (record.source_state, record.target_state, record.version) == ("open", "open", 2)
    assert (record.via, record.username) == ("api", "dee")
    # Published once the transaction committed, as every run is.
    assert RecordingBroker.published == [events.ObjectChanged("ticket", str(ticket.pk), 2)]


def test_the_version_is_checked_as_for_a_transition(project, people, tickets) -> None:
    ticket, dee = tickets["open"], people["dee"]
    stale = _patch(dee, ticket.pk, {"assignee": "bo", "expectedVersion": 7})
    assert stale.status_code == 412, stale.content
    problem = stale.json()
    assert problem["code"] == "stale_version"
    assert problem["current"]["version"] == 1  # the object as it is now
    stale_header = _patch(dee, ticket.pk, {"assignee": "bo"}, HTTP_IF_MATCH='"7"')
    assert stale_header.status_code == 412
    both = _patch(dee, ticket.pk, {"assignee": "bo", "expectedVersion": 1}, HTTP_IF_MATCH='"2"')
    assert both.status_code == 400
    assert Ticket.objects.get(pk=ticket.pk).version == 1
    assert not AuditRecord.objects.exists()

    # As for a transition, the version is optional: without one, the edit runs.
    by_header = _patch(dee, ticket.pk, {"assignee": "bo"}, HTTP_IF_MATCH='"1"')
    assert by_header.status_code == 200, by_header.content
    unversioned = _patch(dee, ticket.pk, {"assignee": "cy"})
    assert unversioned.status_code == 200
    assert Ticket.objects.get(pk=ticket.pk).version == 3


def test_only_the_declared_fields_are_writable(project, people, tickets) -> None:
    ticket, dee = tickets["open"], people["dee"]
    for field, value in (("state", "closed"), ("version", 9), ("id", 5), ("colour", "red")):
        response = _patch(dee, ticket.pk, {"assignee": "bo", field: value, "expectedVersion": 1})
        assert response.status_code == 400, (field, response.content)
        problem = response.json()
        assert problem["code"] == "validation_error"
        assert list(problem["errors"]) == [field]
    too_long = _patch(dee, ticket.pk, {"assignee": "x" * 51})
    assert too_long.status_code == 400
    assert list(too_long.json()["errors"]) == ["assignee"]  # the model field's max_length
    stored = Ticket.objects.get(pk=ticket.pk)
    assert (stored.assignee, stored.state, stored.version) == ("ann", "open", 1)
    assert not AuditRecord.objects.exists()


def test_sending_what_the_object_holds_changes_nothing(project, people, tickets) -> None:
    ticket = tickets["open"]
    response = _patch(people["dee"], ticket.pk, {"assignee": "ann", "expectedVersion": 1})
    assert response.status_code == 200
    assert response.json()["version"] == 1
    assert not AuditRecord.objects.exists()
    assert RecordingBroker.published == []


def test_a_state_that_leaves_nothing_editable_refuses_the_edit(project, people, tickets) -> None:
    closed = tickets["closed"]
    detail = Client().get(f"/v2/tickets/{closed.pk}/", **_headers(people["dee"])).json()
    assert "edit_ticket" not in _names(detail["affordances"])
    refusal = next(e for e in detail["unavailableAffordances"] if e["name"] == "edit_ticket")
    assert refusal["reason"] == "invalid_state"
    response = _patch(people["dee"], closed.pk, {"assignee": "bo", "expectedVersion": 1})
    assert response.status_code == 409, response.content
    assert (response.json()["code"], response.json()["reason"]) == (
        "operation_not_available",
        "invalid_state",
    )
    assert Ticket.objects.get(pk=closed.pk).assignee == "ann"


def test_a_hidden_object_is_404_exactly_like_a_missing_one(project, people, tickets) -> None:
    dee = people["dee"]
    hidden = _patch(dee, tickets["secret"].pk, {"assignee": "bo", "expectedVersion": 1})
    missing = _patch(dee, 987654, {"assignee": "bo", "expectedVersion": 1})
    assert hidden.status_code == missing.status_code == 404
    assert hidden.content == missing.content
    assert Ticket.objects.get(pk=tickets["secret"].pk).assignee == ticket_api.SECRET
    # The superuser sees it, and may edit it.
    root = _patch(people["root"], tickets["secret"].pk, {"assignee": "bo"})
    assert root.status_code == 200


def test_an_idempotency_key_replays_the_edit(project, people, tickets) -> None:
    ticket, dee = tickets["open"], people["dee"]
    body = {"assignee": "bo", "expectedVersion": 1}
    first = _patch(dee, ticket.pk, body, HTTP_IDEMPOTENCY_KEY="edit-1")
    again = _patch(dee, ticket.pk, body, HTTP_IDEMPOTENCY_KEY="edit-1")
    assert first.status_code == again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert AuditRecord.objects.filter(object_id=str(ticket.pk)).count() == 1
    assert Ticket.objects.get(pk=ticket.pk).version == 2
    reused = _patch(dee, ticket.pk, {"assignee": "cy"}, HTTP_IDEMPOTENCY_KEY="edit-1")
    assert reused.status_code == 422
    assert reused.json()["code"] == "idempotency_key_reused"


def test_a_preview_changes_nothing(project, people, tickets) -> None:
    ticket = tickets["open"]
    response = Client().patch(
        f"/v2/tickets/{ticket.pk}/?preview=true",
        json.dumps({"assignee": "bo", "expectedVersion": 1}),
        content_type="application/json",
        **_headers(people["dee"]),
    )
    assert response.status_code == 200, response.content
    preview = response.json()
    assert (preview["preview"], preview["name"], preview["validForVersion"]) == (
        True,
        "edit_ticket",
        1,
    )
    assert preview["stateChange"] == {"field": "state", "from": "open", "to": "open"}
    assert preview["representation"]["assignee"] == "bo"
    assert Ticket.objects.get(pk=ticket.pk).assignee == "ann"
    assert not AuditRecord.objects.exists()


# --- what an editor is offered: catalog, affordances, HAL-FORMS, OPTIONS ---------------


def test_the_catalog_entry_describes_the_declared_fields(project, people) -> None:
    response = Client().get("/v2/operations/edit_ticket/", **_headers(people["dee"]))
    assert response.status_code == 200, response.content
    entry = response.json()
    assert (entry["kind"], entry["method"], entry["resource"]) == ("edit", "PATCH", "ticket")
    assert "transition" not in entry
    schema = entry["inputSchema"]
    assert list(schema["properties"]) == ["ticketId", "assignee", "expectedVersion"]
    assert schema["required"] == ["ticketId"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["assignee"]["maxLength"] == 50
    assert entry["annotations"]["readOnlyHint"] is False


def test_an_editor_is_offered_the_edit_on_the_object(project, people, tickets) -> None:
    ticket, headers = tickets["open"], _headers(people["dee"])
    client = Client()
    detail = client.get(f"/v2/tickets/{ticket.pk}/", **headers)
    assert detail["Allow"] == "GET, PATCH, HEAD, OPTIONS"
    body = detail.json()
    entry = next(e for e in body["affordances"] if e["name"] == "edit_ticket")
    assert entry["method"] == "PATCH"
    assert entry["target"] == body["url"]
    assert entry["arguments"] == {"ticketId": ticket.pk}
    assert entry["validForVersion"] == 1
    listed = client.get("/v2/tickets/", **headers).json()["results"]
    assert "edit_ticket" in _names(next(i for i in listed if i["id"] == ticket.pk)["affordances"])

    hal = client.get(f"/v2/tickets/{ticket.pk}/", HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE, **headers)
    template = hal.json()["_templates"]["edit_ticket"]
    assert (template["method"], template["target"]) == ("PATCH", body["url"])
    properties = {prop["name"]: prop for prop in template["properties"]}
    assert set(properties) == {"assignee", "expectedVersion"}
    assert properties["expectedVersion"]["value"] == "1"

    options = client.options(f"/v2/tickets/{ticket.pk}/", **headers).json()
    assert set(options["actions"]["PATCH"]) == {"assignee"}


def test_a_caller_without_the_change_permission_never_sees_the_edit(
    project, people, tickets
) -> None:
    vic, ticket = people["vic"], tickets["open"]
    client, headers = Client(), _headers(vic)
    catalog = client.get("/v2/operations/", **headers)
    assert "edit_ticket" not in catalog.content.decode()
    assert client.get("/v2/operations/edit_ticket/", **headers).status_code == 404
    detail = client.get(f"/v2/tickets/{ticket.pk}/", **headers)
    assert detail["Allow"] == "GET, HEAD, OPTIONS"
    hal = client.get(f"/v2/tickets/{ticket.pk}/", HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE, **headers)
    options = client.options(f"/v2/tickets/{ticket.pk}/", **headers)
    for response in (detail, hal, options):
        assert "edit_ticket" not in response.content.decode()
        assert "PATCH" not in response.content.decode()

    refused = _patch(vic, ticket.pk, {"assignee": "bo", "expectedVersion": 1})
    on_missing = _patch(vic, 987654, {"assignee": "bo"})
    assert refused.status_code == on_missing.status_code == 405
    assert refused.content == on_missing.content
    assert refused.json()["code"] == "method_not_allowed"
    assert refused["Allow"] == "GET, HEAD, OPTIONS"
    assert "edit" not in refused.content.decode()

    wire = _wire(vic)
    assert "edit_ticket" not in _names(wire.tools())
    call = wire.call("tools/call", {"name": "edit_ticket", "arguments": {"ticketId": ticket.pk}})
    unknown = wire.call("tools/call", {"name": "edit_nothing", "arguments": {}})
    assert call["error"] == unknown["error"]
    assert Ticket.objects.get(pk=ticket.pk).assignee == "ann"


def test_without_editable_fields_patch_is_405_and_there_is_no_tool(db, people, tickets) -> None:
    """A registration that declares nothing: no edit anywhere, for anyone; PATCH answers
    exactly what a caller without the permission gets where the edit exists."""
    with mounted(EDITABLE):
        refused = _patch(people["vic"], tickets["open"].pk, {"assignee": "bo"})
    with mounted(None):
        root = people["root"]
        response = _patch(root, tickets["open"].pk, {"assignee": "bo"})
        assert response.status_code == 405
        assert (response.content, response["Allow"]) == (refused.content, refused["Allow"])
        assert get_catalog().lookup("edit_ticket") is None
        catalog = Client().get("/v2/operations/", **_headers(root))
        assert "edit_ticket" not in catalog.content.decode()
        assert "edit_ticket" not in _names(_wire(root).tools())
        detail = Client().get(f"/v2/tickets/{tickets['open'].pk}/", **_headers(root))
        assert detail["Allow"] == "GET, HEAD, OPTIONS"
        assert "edit_ticket" not in detail.content.decode()
    assert Ticket.objects.get(pk=tickets["open"].pk).assignee == "ann"


# --- MCP --------------------------------------------------------------------------------


def test_the_mcp_tool_runs_the_same_edit(project, people, tickets) -> None:
    ticket, wire = tickets["open"], _wire(people["dee"])
    tool = next(t for t in wire.tools() if t["name"] == "edit_ticket")
    assert set(tool["inputSchema"]["properties"]) == {"ticketId", "assignee", "expectedVersion"}
    assert tool["annotations"]["readOnlyHint"] is False

    done = wire.tool("edit_ticket", {"ticketId": ticket.pk, "assignee": "bo", "expectedVersion": 1})
    assert done["isError"] is False, done
    assert (done["structuredContent"]["assignee"], done["structuredContent"]["version"]) == (
        "bo",
        2,
    )
    (record,) = AuditRecord.objects.filter(object_id=str(ticket.pk))
    assert (record.operation_name, record.via) == ("edit_ticket", "mcp")
    assert record.arguments["to"] == {"assignee": "bo"}

    def refused(arguments: dict[str, Any]) -> str:
        result = wire.tool("edit_ticket", arguments)
        assert result["isError"] is True, result
        return str(result["structuredContent"]["code"])

    assert refused({"ticketId": ticket.pk, "assignee": "cy", "expectedVersion": 1}) == (
        "stale_version"
    )
    assert refused({"ticketId": ticket.pk, "state": "closed"}) == "validation_error"
    assert refused({"ticketId": tickets["secret"].pk, "assignee": "cy"}) == "not_found"
    assert refused({"ticketId": 987654, "assignee": "cy"}) == "not_found"
    assert refused({"ticketId": tickets["closed"].pk, "assignee": "cy"}) == (
        "operation_not_available"
    )
    assert Ticket.objects.get(pk=ticket.pk).version == 2

    keyed = {"_meta": {"affordances/idempotencyKey": "mcp-edit"}}
    arguments = {"ticketId": ticket.pk, "assignee": "di"}
    first = wire.tool("edit_ticket", arguments, **keyed)
    again = wire.tool("edit_ticket", arguments, **keyed)
    assert first["structuredContent"] == again["structuredContent"]
    assert again["_meta"]["affordances/replayed"] is True
    assert AuditRecord.objects.filter(object_id=str(ticket.pk)).count() == 2


@pytest.fixture
def forms_profile(project: None) -> Iterator[str]:
    """The ticket project with MCP's forms profile (interface C) mounted too; its path."""
    module = types.ModuleType("tests.edits_forms_urls")
    module.urlpatterns = [  # type: ignore[attr-defined]
        *ticket_api.urlpatterns,
        path("forms-mcp", McpView.as_view(profile=FORMS)),
    ]
    module.handler404 = ticket_api.handler404  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        with override_settings(ROOT_URLCONF=module.__name__):
            yield "/forms-mcp"
    finally:
        del sys.modules[module.__name__]


def test_the_forms_profile_submits_the_edit_template(forms_profile, people, tickets) -> None:
    wire = Wire(str(AccessToken.for_user(people["dee"])), path=forms_profile)
    url = f"http://testserver/v2/tickets/{tickets['open'].pk}/"
    document = wire.tool("read_resource", {"url": url})["structuredContent"]
    template = document["_templates"]["edit_ticket"]
    assert (template["method"], template["target"]) == ("PATCH", url)
    done = wire.tool(
        "submit_form",
        {
            "url": url,
            "template": "edit_ticket",
            "arguments": {"assignee": "bo", "expectedVersion": "1"},
        },
    )
    assert done["isError"] is False, done
    assert (done["structuredContent"]["assignee"], done["structuredContent"]["version"]) == (
        "bo",
        2,
    )
    # Not offered on a closed ticket: the core says why, as PATCH does.
    closed = f"http://testserver/v2/tickets/{tickets['closed'].pk}/"
    refused = wire.tool(
        "submit_form", {"url": closed, "template": "edit_ticket", "arguments": {"assignee": "bo"}}
    )
    assert refused["isError"] is True
    assert refused["structuredContent"]["reason"] == "invalid_state"


# --- the admin: the same edit path ------------------------------------------------------


def test_the_admins_change_form_saves_through_the_same_edit(project, people, tickets) -> None:
    ticket = tickets["open"]
    client = Client()
    client.force_login(people["dee"])
    url = f"/generic-admin/generic/ticket/{ticket.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    # The change form is the edit: not one more action on the panel.
    assert "edit_ticket" not in {e["operation"].name for e in page.context["affordances_available"]}
    saved = client.post(url, {"assignee": "bo", "_save": "Save"})
    assert saved.status_code == 302, saved.content
    (record,) = AuditRecord.objects.filter(object_id=str(ticket.pk))
    assert (record.operation, record.via) == (get_catalog().lookup("edit_ticket").urn, "admin")
    assert record.arguments == {
        "changed": ["assignee"],
        "from": {"assignee": "ann"},
        "to": {"assignee": "bo"},
    }
    assert Ticket.objects.get(pk=ticket.pk).version == 2

    # A closed ticket: nothing editable in the admin either.
    closed = tickets["closed"]
    client.post(
        f"/generic-admin/generic/ticket/{closed.pk}/change/", {"assignee": "bo", "_save": "Save"}
    )
    assert Ticket.objects.get(pk=closed.pk).assignee == "ann"


def test_an_admin_without_editable_fields_takes_the_registrations(project, people, tickets) -> None:
    class PlainTicketAdmin(AffordanceAdminMixin, admin.ModelAdmin):
        pass

    model_admin = PlainTicketAdmin(Ticket, admin.AdminSite(name="plain"))
    request = RequestFactory().get("/")
    request.user = people["dee"]
    assert model_admin.get_editable_fields(request, tickets["open"]) == {"assignee"}
    assert model_admin.get_editable_fields(request, tickets["closed"]) == set()
    # The core's answer for this caller: none to one who may not change tickets.
    request.user = people["vic"]
    assert model_admin.get_editable_fields(request, tickets["open"]) == set()


def test_history_names_the_edit_only_to_who_may_know_it(project, people, tickets) -> None:
    from affordances.history import history

    ticket = tickets["open"]
    assert _patch(people["dee"], ticket.pk, {"assignee": "bo"}).status_code == 200
    resource = get_catalog().resource_for(Ticket)
    (seen,) = history(resource, ticket, people["dee"])
    assert (seen.operation, seen.arguments["to"]) == ("edit_ticket", {"assignee": "bo"})
    (redacted,) = history(resource, ticket, people["vic"])
    assert (redacted.operation, redacted.arguments) == (None, None)


# --- perform() from code ------------------------------------------------------------------


def test_perform_runs_the_edit_for_code_too(project, people, tickets) -> None:
    operation = get_catalog().lookup("edit_ticket")
    outcome = perform(
        operation=operation,
        pk=tickets["open"].pk,
        user=people["dee"],
        arguments={"assignee": "bo"},
        via="api",
        represent=lambda instance: {"assignee": instance.assignee},
        expected_version=1,
    )
    assert outcome.body == {"assignee": "bo"}
    with pytest.raises(Problem) as refused:
        perform(
            operation=operation,
            pk=tickets["open"].pk,
            user=people["vic"],
            arguments={"assignee": "cy"},
            via="api",
            represent=lambda instance: {},
        )
    assert refused.value.code == "not_found"


# --- the system check -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("editable", "says"),
    [
        (["colour"], "has no field 'colour'"),
        (["state"], "'state' is an FSM field"),
        (["version"], "'version' is the version field"),
        (["id"], "'id' is the primary key"),
        ({"open": ["assignee"], "*": ["auditrecord"]}, "has no field 'auditrecord'"),
    ],
)
def test_the_check_refuses_fields_an_edit_cannot_take(db, editable, says) -> None:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Ticket": _registration(editable)},
    }
    with override_settings(AFFORDANCES=affordances):
        errors = [m for m in check_catalog() if m.id == "affordances.E043"]
    assert len(errors) == 1, errors
    assert says in errors[0].msg
    assert errors[0].hint


def test_the_check_accepts_plain_fields(db) -> None:
    for editable in (["assignee"], EDITABLE, {"*": ["assignee"]}):
        affordances = {
            **django_settings.AFFORDANCES,
            "MODELS": {"generic.Ticket": _registration(editable)},
        }
        with override_settings(AFFORDANCES=affordances):
            assert [m for m in check_catalog() if m.id == "affordances.E043"] == []


def test_the_check_refuses_a_state_the_fsm_fields_choices_do_not_have(db, monkeypatch) -> None:
    states = [("open", "Open"), ("escalated", "Escalated"), ("closed", "Closed")]
    monkeypatch.setattr(Ticket._meta.get_field("state"), "choices", states)
    for editable, refused in (({"opne": ["assignee"]}, True), (EDITABLE, False)):
        affordances = {
            **django_settings.AFFORDANCES,
            "MODELS": {"generic.Ticket": _registration(editable)},
        }
        with override_settings(AFFORDANCES=affordances):
            errors = [m.msg for m in check_catalog() if m.id == "affordances.E043"]
        assert [("'opne'" in msg) for msg in errors] == ([True] if refused else [])


@pytest.mark.parametrize("malformed", ["assignee", [], {"open": "assignee"}, [1], {"open": []}])
def test_a_malformed_declaration_is_refused(db, malformed) -> None:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Ticket": _registration(malformed)},
    }
    with override_settings(AFFORDANCES=affordances):
        messages = check_catalog()
    assert [m.id for m in messages] == ["affordances.E001"]
    assert "EDITABLE_FIELDS" in messages[0].msg


# --- an object-permission backend: the edit shows where the object grants it -------------


@rules.predicate
def _owns(user: Any, expense: Expense | None) -> bool:
    return expense is not None and expense.owner == user.get_username()


@pytest.fixture
def expense_project(db: None) -> Iterator[None]:
    registration = {**expenses_app.REGISTRATION, "EDITABLE_FIELDS": {"draft": ["amount"]}}
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Expense": registration}}
    backends = ["rules.permissions.ObjectPermissionBackend", *_model_backend()]
    rules.set_perm("generic.change_expense", _owns)
    try:
        with override_settings(AFFORDANCES=affordances, AUTHENTICATION_BACKENDS=backends):
            importlib.reload(expenses_app)
            with override_settings(ROOT_URLCONF="tests.generic.expenses"):
                yield
    finally:
        rules.remove_perm("generic.change_expense")


def _model_backend() -> list[str]:
    return ["django.contrib.auth.backends.ModelBackend"]


def test_with_an_object_backend_the_edit_is_where_the_object_grants_it(expense_project) -> None:
    users = get_user_model().objects
    ann, ben = users.create_user("ann"), users.create_user("ben")
    draft = Expense.objects.create(owner="ann")
    submitted = Expense.objects.create(owner="ann", state="submitted")

    def lists(user: Any, expense: Expense) -> tuple[list[str], list[str]]:
        body = Client().get(f"/api/expenses/{expense.pk}/", **_headers(user)).json()
        return _names(body["affordances"]), _names(body["unavailableAffordances"])

    assert "edit_expense" in lists(ann, draft)[0]
    assert "edit_expense" in lists(ann, submitted)[1]  # her own, but not in draft
    listed, refused = lists(ben, draft)
    assert "edit_expense" not in listed + refused  # not his: not there at all

    def patch(user: Any, pk: Any) -> Any:
        return Client().patch(
            f"/api/expenses/{pk}/",
            json.dumps({"amount": 20}),
            content_type="application/json",
            **_headers(user),
        )

    # Not his: refused as a missing expense is, as a transition he does not hold is.
    refused, missing = patch(ben, draft.pk), patch(ben, 987654)
    assert refused.status_code == missing.status_code == 404
    assert refused.content == missing.content
    assert patch(ann, draft.pk).status_code == 200
    assert Expense.objects.get(pk=draft.pk).amount == 20


# --- OpenAPI and the browsable API ------------------------------------------------------


def _openapi(user: Any) -> dict[str, Any]:
    request = APIRequestFactory().get("/v2/")
    force_authenticate(request, user)
    generator = SchemaGenerator(urlconf="tests.generic.api")
    return generator.get_schema(request=Request(request), public=True)


def test_the_openapi_document_states_the_edit_to_an_editor_only(project, people) -> None:
    document = _openapi(people["dee"])
    patch = document["paths"]["/v2/tickets/{id}/"]["patch"]
    assert patch["operationId"] == "edit_ticket"
    assert {"412", "409", "422"} <= set(patch["responses"])
    headers = {p["name"] for p in patch["parameters"] if p["in"] == "header"}
    assert {"If-Match", "Idempotency-Key"} <= headers
    ref = patch["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = document["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    assert set(body["properties"]) == {"assignee", "expectedVersion"}
    assert body["additionalProperties"] is False

    assert "patch" not in _openapi(people["vic"])["paths"]["/v2/tickets/{id}/"]
    with mounted(None):
        assert "patch" not in _openapi(people["root"])["paths"]["/v2/tickets/{id}/"]


def test_the_browsable_api_sends_the_edit_form_as_a_patch(project, people, tickets) -> None:
    page = Client().get(
        f"/v2/tickets/{tickets['open'].pk}/", HTTP_ACCEPT="text/html", **_headers(people["dee"])
    )
    assert page.status_code == 200
    assert 'data-operation="edit_ticket" data-method="PATCH"' in page.content.decode()
