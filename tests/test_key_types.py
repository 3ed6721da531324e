"""Any primary key Django supports: a UUID and a text key, parsed by their own fields.

A malformed id is the same ``404 not_found`` as a missing object on every face (REST,
HAL-FORMS, MCP tools and resources, the admin) — never a 500; the id argument's schema
follows the key field; ``perform(pk=…)`` takes the key in its Python type or as text.
"""

from __future__ import annotations

import importlib
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.test import APIClient

from affordances.catalog import get_catalog
from affordances.execution import perform
from tests.generic import keys_api
from tests.generic.keys import Locker, Voucher

HAL_FORMS = "application/prs.hal-forms+json"

MALFORMED_UUIDS = [
    "not-a-uuid",
    "123",
    "0" * 31,
    "{12345678-1234-5678-1234-567812345678}",  # braces: not the one spelling
    "12345678123456781234567812345678",  # bare hex
    "urn:uuid:12345678-1234-5678-1234-567812345678",
    "12345678-1234-5678-1234-56781234567g",
    "%00",
    "a" * 2000,
    "%C3%A9",
]
MALFORMED_CODES = ["x" * 13, "%00", "a%0Ab", "a" * 2000]


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": keys_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(keys_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.keys_api"):
            yield


@pytest.fixture
def root(project: None) -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


@pytest.fixture
def api(root: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(root)
    return client


def _mcp(client: APIClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post(
        "/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code < 500, response.content
    return response.json()


def test_the_id_argument_schema_follows_the_key_field(project):
    catalog = get_catalog()
    voucher = catalog.lookup("redeem_voucher").input_schema["properties"]["voucherId"]
    locker = catalog.lookup("occupy_locker").input_schema["properties"]["lockerId"]
    assert voucher["type"] == "string" and voucher["format"] == "uuid"
    assert locker["type"] == "string" and locker["maxLength"] == 12


def test_perform_takes_the_key_in_its_python_type_or_as_text(root):
    operation = get_catalog().lookup("redeem_voucher")
    first, second = Voucher.objects.create(), Voucher.objects.create()
    represent = lambda instance: {"id": str(instance.pk)}  # noqa: E731
    run = {"operation": operation, "user": root, "arguments": {}, "via": "api"}
    assert perform(pk=first.pk, represent=represent, **run).status == 200  # a uuid.UUID
    assert perform(pk=str(second.pk).upper(), represent=represent, **run).status == 200
    assert set(Voucher.objects.values_list("phase", flat=True)) == {"redeemed"}


def test_every_face_works_with_a_uuid_and_a_text_key(api, root):
    voucher = Voucher.objects.create()
    locker = Locker.objects.create(code="B-17")
    detail = api.get(f"/api/vouchers/{voucher.pk}/")
    assert detail.status_code == 200
    assert [a["name"] for a in detail.json()["affordances"]] == ["redeem_voucher"]
    assert api.get(f"/api/lockers/{locker.pk}/", HTTP_ACCEPT=HAL_FORMS).status_code == 200
    assert api.post(f"/api/lockers/{locker.pk}/occupy/", {}, format="json").status_code == 200
    called = _mcp(
        api, "tools/call", {"name": "redeem_voucher", "arguments": {"voucherId": str(voucher.pk)}}
    )
    assert called["result"].get("isError") is not True, called
    assert Voucher.objects.get().phase == "redeemed"
    admin = Client()
    admin.force_login(root)
    assert admin.get(f"/keys-admin/generic/voucher/{voucher.pk}/change/").status_code == 200
    assert admin.get(f"/keys-admin/generic/locker/{locker.pk}/change/").status_code == 200


def _missing_answer(api: APIClient, path: str) -> tuple[int, Any]:
    response = api.get(path)
    return response.status_code, response.json()


@pytest.mark.parametrize(
    ("collection", "key", "tool", "argument"),
    [("vouchers", bad, "get_voucher", "voucherId") for bad in MALFORMED_UUIDS]
    + [("lockers", bad, "get_locker", "lockerId") for bad in MALFORMED_CODES],
)
def test_a_malformed_id_is_a_missing_object_on_every_face(
    api, root, collection, key, tool, argument
):
    Voucher.objects.create()
    Locker.objects.create(code="B-17")
    missing = (
        f"/api/{collection}/{uuid.UUID(int=1)}/"
        if collection == "vouchers"
        else f"/api/{collection}/NOPE/"
    )
    status, body = _missing_answer(api, missing)
    assert (status, body["code"]) == (404, "not_found")

    # REST and HAL-FORMS reads, a transition, OPTIONS
    for accept in ("application/json", HAL_FORMS):
        response = api.get(f"/api/{collection}/{key}/", HTTP_ACCEPT=accept)
        assert response.status_code == 404, (accept, response.content[:200])
    transition = "redeem" if collection == "vouchers" else "occupy"
    response = api.post(f"/api/{collection}/{key}/{transition}/", {}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    options = api.options(f"/api/{collection}/{key}/{transition}/")
    options_missing = api.options(f"{missing}{transition}/")
    assert (options.status_code, options.json()) == (
        options_missing.status_code,
        options_missing.json(),
    )

    # MCP: the read tool, the transition tool, and a resource URI
    decoded = key.replace("%00", "\x00").replace("%0A", "\n").replace("%C3%A9", "é")
    answer = _mcp(api, "tools/call", {"name": tool, "arguments": {argument: decoded}})
    if "error" not in answer:
        assert answer["result"]["isError"] is True
        assert answer["result"]["structuredContent"]["code"] in {"not_found", "validation_error"}
    resource = _mcp(api, "resources/read", {"uri": f"http://testserver/api/{collection}/{key}/"})
    assert "error" in resource or resource["result"].get("isError") is True

    # The admin: the change page and the operation page
    admin = Client(raise_request_exception=False)
    admin.force_login(root)
    model = "voucher" if collection == "vouchers" else "locker"
    for page in ("change/", f"operations/{transition}_{model}/"):
        response = admin.get(f"/keys-admin/generic/{model}/{key}/{page}")
        assert response.status_code in {302, 400, 404}, (page, response.status_code)

    # Nothing ran.
    assert set(Voucher.objects.values_list("phase", flat=True)) == {"issued"}
    assert set(Locker.objects.values_list("phase", flat=True)) == {"free"}


@pytest.mark.parametrize("model", ["voucher", "locker"])
def test_a_confirmation_on_the_forms_profile_takes_any_key(
    root: Any, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    # submit_form asks before it submits an operation that requires confirmation; the
    # object's id from the URL reaches that check as JSON spells it (a UUID's or a text
    # key's text), so the client that cannot ask is refused for that reason alone.
    from affordances.operations import Operation

    monkeypatch.setattr(Operation, "confirmation_required", property(lambda op: True))
    if model == "voucher":
        key, name = str(Voucher.objects.create().pk), "redeem_voucher"
    else:
        key, name = Locker.objects.create(code="L-7").pk, "occupy_locker"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "submit_form",
            "arguments": {"url": f"http://testserver/api/{model}s/{key}/", "template": name},
        },
    }
    from rest_framework_simplejwt.tokens import AccessToken

    response = APIClient().post(
        "/mcp/forms",
        data=json.dumps(body),
        content_type="application/json",
        headers={
            "Accept": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
            # The forms profile reads through the REST stack with the caller's credentials.
            "Authorization": f"Bearer {AccessToken.for_user(root)}",
        },
    )
    result = response.json()["result"]
    assert result["isError"] is True, result
    assert result["structuredContent"]["code"] == "confirmation_required", result
    assert result["structuredContent"]["preview"]["stateChange"]["from"] in ("issued", "free")


@pytest.mark.parametrize("model", ["voucher", "locker"])
def test_a_confirmation_accepted_on_the_forms_profile_runs_with_any_key(
    root: Any, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    # The accepted answer is checked against the operation's input schema, id included:
    # a UUID or text key must be there as its text, not as a Python UUID.
    from rest_framework_simplejwt.tokens import AccessToken

    from affordances.operations import Operation
    from tests.mcp_wire import MODERN, Wire

    monkeypatch.setattr(Operation, "confirmation_required", property(lambda op: True))
    if model == "voucher":
        instance: Any = Voucher.objects.create()
        name, done = "redeem_voucher", "redeemed"
    else:
        instance = Locker.objects.create(code="L-8")
        name, done = "occupy_locker", "occupied"
    wire = Wire(str(AccessToken.for_user(root)), path="/mcp/forms", version=MODERN)
    eliciting = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    call = {
        "name": "submit_form",
        "arguments": {"url": f"http://testserver/api/{model}s/{instance.pk}/", "template": name},
        "_meta": eliciting,
    }
    asked = wire.request("tools/call", call).json()["result"]
    assert asked.get("resultType") == "input_required", asked
    answer = {"confirmation": {"action": "accept", "content": {"confirm": True}}}
    ran = wire.request(
        "tools/call", {**call, "inputResponses": answer, "requestState": asked["requestState"]}
    ).json()["result"]
    assert ran["isError"] is False, ran
    assert type(instance).objects.get(pk=instance.pk).phase == done
