"""Input serializers as DRF views have them, and transitions that know who acts.

An input serializer gets a context (``request``, ``user``, ``instance``, ``operation``):
``CurrentUserDefault`` and ``HiddenField`` fill the caller, ``validate()`` sees the
object under its row lock. Related fields take the related key's schema, find only the
objects the caller may see, and are audited as keys. A transition method with a ``by``
parameter receives the acting user, on every face (issue 36, findings 4 and 6).
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework import serializers
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.checks import _check_inputs, check_catalog
from affordances.execution import perform
from affordances.models import AuditRecord
from tests import mcp_wire
from tests.generic import transfers_api
from tests.generic.transfers import Branch, Crate, Label


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": transfers_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(transfers_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.transfers_api"):
            yield


@pytest.fixture
def ann(project: None) -> Any:
    return get_user_model().objects.create_superuser("ann", password="x")


@pytest.fixture
def bob(project: None) -> Any:
    # Not a superuser: sees only the branches he staffs, may use every operation.
    user = get_user_model().objects.create_user("bob", password="x", is_staff=True)
    from django.contrib.auth.models import Permission

    user.user_permissions.set(Permission.objects.filter(content_type__app_label="generic"))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def branches(project: None) -> SimpleNamespace:
    return SimpleNamespace(
        north=Branch.objects.create(code="north", staff="bob"),
        south=Branch.objects.create(code="south", staff="bob"),
        east=Branch.objects.create(code="east", staff="carol"),  # hidden from bob
    )


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def mcp(client: APIClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return mcp_wire.result(client, "/mcp", "tools/call", {"name": name, "arguments": arguments})


def test_related_fields_take_the_related_key_and_hidden_fields_are_no_arguments(project):
    schema = get_catalog().lookup("send_crate").input_schema
    properties = schema["properties"]
    assert properties["branch"] == {"type": "string", "format": "uuid"}
    assert properties["via"] == {"type": "string", "minLength": 1, "maxLength": 12}
    assert properties["labels"] == {"type": "array", "items": {"type": "integer", "minimum": 1}}
    assert "packer" not in properties and "by" not in properties
    assert set(schema["required"]) == {"crateId", "branch"}
    create = get_catalog().lookup("create_crate").input_schema
    assert create["properties"] == {"origin": {"type": "string", "minLength": 1, "maxLength": 12}}


def test_rest_create_and_send_fill_the_caller_and_audit_keys(bob, branches):
    label = Label.objects.create(name="fragile")
    client = api(bob)
    created = client.post("/api/crates/", {"origin": "north"}, format="json")
    assert created.status_code == 201, created.content
    crate = Crate.objects.get()
    assert crate.packed_by == "bob"  # HiddenField(default=CurrentUserDefault())

    sent = client.post(
        f"/api/crates/{crate.pk}/send/",
        {"branch": str(branches.south.pk), "via": "north", "labels": [label.pk]},
        format="json",
    )
    assert sent.status_code == 200, sent.content
    crate = Crate.objects.get()
    assert (crate.status, crate.destination, crate.via_branch) == (
        "sent",
        branches.south,
        branches.north,
    )
    assert crate.sent_by == "bob"  # by= the acting user
    assert list(crate.labels.all()) == [label]
    record = AuditRecord.objects.filter(operation_name="send_crate").get()
    # The keys as sent, never the objects (nor the hidden packer).
    assert record.arguments == {
        "branch": str(branches.south.pk),
        "via": str(branches.north.pk),
        "labels": [label.pk],
    }
    assert record.user == bob


def test_a_branch_the_caller_may_not_see_is_refused_as_a_missing_one(bob, branches):
    crate = Crate.objects.create(origin=branches.north)
    client = api(bob)

    def refusal(branch: str) -> dict[str, Any]:
        response = client.post(f"/api/crates/{crate.pk}/send/", {"branch": branch}, format="json")
        assert response.status_code == 400, response.content
        body: dict[str, Any] = response.json()
        return body

    hidden, missing = refusal(str(branches.east.pk)), refusal(str(uuid.UUID(int=7)))
    assert hidden["code"] == missing["code"] == "validation_error"
    assert hidden["errors"]["branch"] == [
        message.replace(str(uuid.UUID(int=7)), str(branches.east.pk))
        for message in missing["errors"]["branch"]
    ]
    # By slug, too; and ann, who sees every branch, may send there.
    by_slug = client.post(
        f"/api/crates/{crate.pk}/send/",
        {"branch": str(branches.south.pk), "via": "east"},
        format="json",
    )
    assert by_slug.status_code == 400 and "via" in by_slug.json()["errors"]
    assert Crate.objects.get().status == "packed"


def test_validate_sees_the_object_and_sent_hidden_or_actor_names_are_unknown(bob, branches):
    crate = Crate.objects.create(origin=branches.north)
    client = api(bob)
    same = client.post(
        f"/api/crates/{crate.pk}/send/", {"branch": str(branches.north.pk)}, format="json"
    )
    assert same.status_code == 400
    assert same.json()["errors"] == {"branch": ["The crate is already there."]}
    for name in ("packer", "by"):
        smuggled = client.post(
            f"/api/crates/{crate.pk}/send/",
            {"branch": str(branches.south.pk), name: 1},
            format="json",
        )
        assert smuggled.status_code == 400
        assert smuggled.json()["errors"] == {name: ["Unknown argument."]}
    assert Crate.objects.get().status == "packed"


@pytest.mark.parametrize(
    "arguments",
    [
        {"via": "no\x00rth"},
        {"via": "x" * 5000},
        {"labels": [10**30]},
        {"labels": ["1\x00"]},
        {"labels": "1"},
        {"branch": "not-a-uuid"},
        {"branch": 10**30},
        {"branch": ["a"]},
    ],
)
def test_hostile_related_values_are_validation_errors_never_500s(bob, branches, arguments):
    crate = Crate.objects.create(origin=branches.north)
    body = {"branch": str(branches.south.pk), **arguments}
    response = api(bob).post(f"/api/crates/{crate.pk}/send/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"


def test_mcp_fills_the_caller_and_passes_who_acts(bob, branches):
    client = api(bob)
    created = mcp(client, "create_crate", {"origin": "south"})
    assert created.get("isError") is not True, created
    crate = Crate.objects.get()
    assert crate.packed_by == "bob"
    sent = mcp(client, "send_crate", {"crateId": crate.pk, "branch": str(branches.north.pk)})
    assert sent.get("isError") is not True, sent
    received = mcp(client, "receive_crate", {"crateId": crate.pk})
    assert received.get("isError") is not True, received
    crate = Crate.objects.get()
    assert (crate.status, crate.sent_by, crate.received_by) == ("received", "bob", "bob")


def test_the_admin_operation_form_passes_who_acts(ann, branches):
    crate = Crate.objects.create(origin=branches.north)
    admin = Client()
    admin.force_login(ann)
    base = f"/transfers-admin/generic/crate/{crate.pk}/operation"
    form = admin.get(f"{base}/send_crate/")
    assert form.status_code == 200
    assert b'name="packer"' not in form.content  # a hidden field is no form input
    sent = admin.post(f"{base}/send_crate/", {"branch": str(branches.east.pk)})
    assert sent.status_code == 302, sent.content[:500]
    received = admin.post(f"{base}/receive_crate/", {})
    assert received.status_code == 302
    crate = Crate.objects.get()
    assert (crate.destination, crate.sent_by, crate.received_by) == (branches.east, "ann", "ann")


def test_perform_from_code_without_a_request_still_knows_the_caller(bob, branches):
    crate = Crate.objects.create(origin=branches.north)
    outcome = perform(
        operation=get_catalog().lookup("send_crate"),
        pk=crate.pk,
        user=bob,
        arguments={"branch": str(branches.south.pk)},
        via="api",
        represent=lambda instance: {"id": instance.pk},
    )
    assert outcome.status == 200
    assert Crate.objects.get().sent_by == "bob"


def test_the_registration_passes_the_checks(project):
    assert [m.id for m in check_catalog() if m.id in {"affordances.E028", "affordances.E029"}] == []


def test_an_input_filling_by_or_a_relation_without_a_key_is_a_check_error(project):
    class ByInput(serializers.Serializer):  # type: ignore[type-arg]
        who = serializers.CharField(source="by")

    class LinkInput(serializers.Serializer):  # type: ignore[type-arg]
        branch = serializers.HyperlinkedRelatedField(
            view_name="affordances:branch-detail", queryset=Branch.objects.all()
        )

    # Reported on the operation's model.
    resource = SimpleNamespace(model=Crate)
    clash = SimpleNamespace(
        name="send_crate", input_serializer=ByInput, actor_parameter="by", resource=resource
    )
    [message] = _check_inputs([clash])
    assert (message.id, message.obj) == ("affordances.E028", Crate)
    fine = SimpleNamespace(
        name="close_branch", input_serializer=ByInput, actor_parameter=None, resource=resource
    )
    assert _check_inputs([fine]) == []
    link = SimpleNamespace(
        name="send_crate", input_serializer=LinkInput, actor_parameter=None, resource=resource
    )
    assert [m.id for m in _check_inputs([link])] == ["affordances.E029"]


def test_two_fsm_fields_each_operation_reasons_from_its_own_field(bob, branches):
    crate = Crate.objects.create(origin=branches.north)
    client = api(bob)

    def offered() -> tuple[list[str], dict[str, str]]:
        body = client.get(f"/api/crates/{crate.pk}/").json()
        names = [entry["name"] for entry in body["affordances"]]
        reasons = {entry["name"]: entry["reason"] for entry in body["unavailableAffordances"]}
        return names, reasons

    assert offered() == (["send_crate", "clear_crate"], {"receive_crate": "invalid_state"})
    assert client.post(f"/api/crates/{crate.pk}/clear/", {}, format="json").status_code == 200
    names, reasons = offered()
    # "cleared" is a state of customs: clear's reason; status is still packed.
    assert names == ["send_crate"]
    assert reasons == {"receive_crate": "invalid_state", "clear_crate": "already_cleared"}
    refused = client.post(f"/api/crates/{crate.pk}/clear/", {}, format="json")
    assert refused.status_code == 409 and refused.json()["reason"] == "already_cleared"
    record = AuditRecord.objects.get(operation_name="clear_crate")
    assert (record.source_state, record.target_state) == ("pending", "cleared")


def test_a_constraint_on_a_slug_input_is_checked_on_the_slug_and_audited_as_the_key(ann, branches):
    """``via`` is a ``SlugRelatedField``: its constraint (``through_hubs``) names codes, as
    the client sends them, on every face that validates; the audit keeps the key."""
    client = api(ann)
    hubs = ["Must be one of: north, south."]

    def send(face: str, crate: Crate, via: str) -> tuple[bool, Any]:
        if face == "rest":
            response = client.post(
                f"/api/crates/{crate.pk}/send/",
                {"branch": str(branches.south.pk), "via": via},
                format="json",
            )
            return response.status_code == 200, response.json()
        result = mcp(
            client,
            "send_crate",
            {"crateId": crate.pk, "branch": str(branches.south.pk), "via": via},
        )
        return result.get("isError") is not True, result["structuredContent"]

    for face in ("rest", "mcp"):
        crate = Crate.objects.create(origin=branches.east)
        entry = next(
            e
            for e in client.get(f"/api/crates/{crate.pk}/").json()["affordances"]
            if e["name"] == "send_crate"
        )
        assert entry["constraints"] == {"properties": {"via": {"enum": ["north", "south"]}}}
        hal = client.get(f"/api/crates/{crate.pk}/", HTTP_ACCEPT="application/prs.hal-forms+json")
        via = next(
            p for p in hal.json()["_templates"]["send_crate"]["properties"] if p["name"] == "via"
        )
        assert via["options"]["inline"] == ["north", "south"]

        ok, refused = send(face, crate, "east")  # a branch ann may see, not a hub
        assert not ok and refused["errors"] == {"via": hubs}, (face, refused)
        ok, sent = send(face, crate, "north")
        assert ok, (face, sent)
        record = AuditRecord.objects.get(operation_name="send_crate", object_id=str(crate.pk))
        assert record.arguments["via"] == str(branches.north.pk)
        assert Crate.objects.get(pk=crate.pk).via_branch == branches.north
