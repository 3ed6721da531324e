"""One visibility: what the registration's ``QUERYSET`` hides is hidden on every face.

The claims of ``tests.generic.claims_api`` register a ``QUERYSET`` of ``(user, request)``
that hides sealed claims and policies — a narrowing the default queryset does not have,
decided by the request. Every face answers a sealed object exactly as a missing one and
runs nothing on it: REST's list, detail, transitions and OPTIONS, HAL-FORMS, MCP's tools
and resources, the admin's change list, change page, operation page and bulk action, a
related input naming a sealed policy, the browsable API's form of that input and the
admin's change form of the relation. A view or admin that narrows on its own is refused
by the system check ``affordances.E032`` (issue 50, T1: a viewset's ``get_queryset()``
hid a claim from its detail only; its list, its transition and MCP still served it).

This module is also a URLconf (``urlpatterns``), for the views the check refuses.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.test import Client, override_settings
from django.urls import include, path
from rest_framework_simplejwt.tokens import AccessToken

from affordances.admin import AffordanceAdminMixin
from affordances.execution import perform
from affordances.models import AuditRecord
from affordances.rest import ResourceRouter, ResourceViewSet
from affordances.rest.checks import check_rest_face
from tests import mcp_wire
from tests.generic import claims_api
from tests.generic.claims import Claim, Policy

urlpatterns: list[Any] = []
handler404 = "affordances.rest.not_found_view"

# Keys far from any other number in a body, so a key can be told from the rest.
SHOWN, SEALED, MISSING = 700001, 700002, 700009


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": claims_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(claims_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.claims_api"):
            yield


@dataclass
class Caller:
    client: Client
    bearer: dict[str, str]

    def api(self, method: str, url: str, body: Any = None, **extra: Any) -> Any:
        send = getattr(self.client, method)
        if body is None:
            return send(url, **self.bearer, **extra)
        return send(url, json.dumps(body), "application/json", **self.bearer, **extra)

    def mcp(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One JSON-RPC call: its whole envelope (an error is an answer too), checked with
        the protocol's types."""
        envelope = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = self.api(
            "post",
            "/mcp",
            envelope,
            HTTP_ACCEPT="application/json",
            HTTP_MCP_PROTOCOL_VERSION=mcp_wire.LEGACY,
        )
        assert response.status_code == 200, response.content
        checked: dict[str, Any] = mcp_wire.check(method, mcp_wire.LEGACY, response.json())
        return checked

    def tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.mcp("tools/call", {"name": name, "arguments": arguments})["result"]


@pytest.fixture
def caller(project: None) -> Caller:
    root = get_user_model().objects.create_superuser("root", password="x")
    client = Client()
    client.force_login(root)  # the admin's session; REST and MCP take the bearer token
    Policy.objects.create(pk=SHOWN, number="P-1")
    Policy.objects.create(pk=SEALED, number="P-2", sealed=True)
    Claim.objects.create(pk=SHOWN)
    Claim.objects.create(pk=SEALED, sealed=True)
    return Caller(client, {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(root)}"})


def _text(response: Any, key: int) -> tuple[int, str]:
    """A response as its status and body, the object's key written as ``{key}``."""
    return response.status_code, response.content.decode().replace(str(key), "{key}")


def _same(answer: Any, key: int) -> Any:
    """``answer`` with ``key`` written as ``{key}`` wherever it stands (a number, text)."""
    if isinstance(answer, dict):
        return {name: _same(value, key) for name, value in answer.items()}
    if isinstance(answer, list | tuple):
        return [_same(value, key) for value in answer]
    if isinstance(answer, str):
        return answer.replace(str(key), "{key}")
    return "{key}" if answer == key and not isinstance(answer, bool) else answer


# --- the faces: each answers for one key, in a form where a key's own spelling is gone --


def rest_list(caller: Caller, key: int) -> Any:
    body = caller.api("get", "/api/claims/").json()
    ids = [item["id"] for item in body["results"]]
    assert body["count"] == len(ids)
    return key in ids


def rest_detail(caller: Caller, key: int) -> Any:
    return _text(caller.api("get", f"/api/claims/{key}/"), key)


def rest_transition(caller: Caller, key: int) -> Any:
    return _text(caller.api("post", f"/api/claims/{key}/reject/", {}), key)


def rest_options_detail(caller: Caller, key: int) -> Any:
    return _text(caller.api("options", f"/api/claims/{key}/"), key)


def rest_options_transition(caller: Caller, key: int) -> Any:
    return _text(caller.api("options", f"/api/claims/{key}/reject/"), key)


HAL_FORMS = {"HTTP_ACCEPT": "application/prs.hal-forms+json"}


def hal_forms_list(caller: Caller, key: int) -> Any:
    return f"/api/claims/{key}/" in caller.api("get", "/api/claims/", **HAL_FORMS).content.decode()


def hal_forms_detail(caller: Caller, key: int) -> Any:
    return _text(caller.api("get", f"/api/claims/{key}/", **HAL_FORMS), key)


def mcp_get_tool(caller: Caller, key: int) -> Any:
    return _same(caller.tool("get_claim", {"claimId": key}), key)


def mcp_list_tool(caller: Caller, key: int) -> Any:
    content = caller.tool("list_claims", {})["structuredContent"]
    assert content["count"] == len(content["results"])
    return key in [item["id"] for item in content["results"]]


def mcp_transition_tool(caller: Caller, key: int) -> Any:
    return _same(caller.tool("reject_claim", {"claimId": key}), key)


def mcp_resources_list(caller: Caller, key: int) -> Any:
    listed = caller.mcp("resources/list", {})["result"]["resources"]
    return f"http://testserver/api/claims/{key}/" in [entry["uri"] for entry in listed]


def mcp_resources_read(caller: Caller, key: int) -> Any:
    uri = f"http://testserver/api/claims/{key}/"
    return _same(caller.mcp("resources/read", {"uri": uri}), key)


ADMIN = "/claims-admin/generic/claim"


def _admin_answer(response: Any, key: int) -> Any:
    """Where the admin went (a request made with ``follow=True``), and what it said there."""
    shown = response.context.get("messages", []) if response.context else []
    said = [str(message) for message in shown]
    return _same([response.redirect_chain, response.status_code, said], key)


def admin_change_list(caller: Caller, key: int) -> Any:
    page = caller.client.get(f"{ADMIN}/")
    assert page.status_code == 200
    return f"{ADMIN}/{key}/change/" in page.content.decode()


def admin_change_page(caller: Caller, key: int) -> Any:
    return _admin_answer(caller.client.get(f"{ADMIN}/{key}/change/", follow=True), key)


def admin_operation_page(caller: Caller, key: int) -> Any:
    url = f"{ADMIN}/{key}/operation/reject_claim/"
    shown = caller.client.get(url)
    run = caller.client.post(url, {"expectedVersion": "1"}, follow=True)
    return [shown.status_code, _admin_answer(run, key)]


def admin_bulk_action(caller: Caller, key: int) -> Any:
    posted = {"action": "operation_reject_claim", "_selected_action": [key]}
    return _admin_answer(caller.client.post(f"{ADMIN}/", posted, follow=True), key)


def rest_related_input(caller: Caller, key: int) -> Any:
    """``key`` is a policy's: the claim moves to it only if the caller may see it."""
    response = caller.api("post", f"/api/claims/{SHOWN}/transfer/", {"policy": key})
    return _text(response, key)


def mcp_related_input(caller: Caller, key: int) -> Any:
    return _same(caller.tool("transfer_claim", {"claimId": SHOWN, "policy": key}), key)


def browsable_related_form(caller: Caller, key: int) -> Any:
    """The browsable API's form of the transfer offers a policy only if the caller may see
    it (a hidden one's key and name would be in its choices)."""
    page = caller.api("get", f"/api/claims/{SHOWN}/", HTTP_ACCEPT="text/html")
    return f'value="{key}"' in page.content.decode()


def admin_change_form_related(caller: Caller, key: int) -> Any:
    """The claim's change form offers, and saves, a policy only if the user may see it."""
    url = f"{ADMIN}/{SHOWN}/change/"
    offered = f'value="{key}"' in caller.client.get(url).content.decode()
    saved = caller.client.post(url, {"policy": key, "_save": "Save"})
    return [offered, saved.status_code]


FACES: list[Callable[[Caller, int], Any]] = [
    rest_list,
    rest_detail,
    rest_transition,
    rest_options_detail,
    rest_options_transition,
    hal_forms_list,
    hal_forms_detail,
    mcp_get_tool,
    mcp_list_tool,
    mcp_transition_tool,
    mcp_resources_list,
    mcp_resources_read,
    admin_change_list,
    admin_change_page,
    admin_operation_page,
    admin_bulk_action,
    rest_related_input,
    mcp_related_input,
    browsable_related_form,
    admin_change_form_related,
]


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.__name__)
def test_a_sealed_object_is_a_missing_one_on_every_face(caller: Caller, face: Any) -> None:
    sealed = face(caller, SEALED)
    missing = face(caller, MISSING)

    assert sealed == missing
    # Nothing ran: no state, version or audit record changed (the related input's
    # claim is a shown one: it did not move to the sealed policy either).
    assert not AuditRecord.objects.exists()
    claims: list[Any] = list(Claim.objects.order_by("pk").values_list("state", "version", "policy"))
    assert claims == [("open", 1, None), ("open", 1, None)]
    # The face does serve what the caller may see: the answers above are not just refusals.
    if face is not rest_options_detail:  # a detail route takes no input: nothing to describe
        assert face(caller, SHOWN) != missing


def test_the_faces_request_is_what_the_registration_is_given(caller: Caller) -> None:
    """The request a face hands the registration's function is its own: with the header
    that clears sealed objects, REST, MCP and the admin show the sealed claim."""
    header = claims_api.CLEARANCE_HEADER
    cleared = {f"HTTP_{header.upper().replace('-', '_')}": "sealed"}
    assert caller.api("get", f"/api/claims/{SEALED}/", **cleared).status_code == 200
    caller.bearer.update(cleared)
    assert caller.tool("get_claim", {"claimId": SEALED})["isError"] is False
    page = caller.client.get(f"{ADMIN}/{SEALED}/change/", headers={header: "sealed"})
    assert page.status_code == 200


def test_perform_from_code_passes_no_request(caller: Caller) -> None:
    """A run from code has no request: the registration's function is given None (these
    claims' let code reach sealed ones), and ``perform`` takes a face's ``request=``."""
    root = get_user_model().objects.get(username="root")
    outcome = perform(
        operation=_operation("reject_claim"),
        pk=SEALED,
        user=root,
        arguments={},
        via="api",
        represent=lambda claim: {"id": claim.pk},
    )
    assert outcome.status == 200
    assert Claim.objects.get(pk=SEALED).state == "rejected"


def _operation(name: str) -> Any:
    from affordances.catalog import get_catalog

    return get_catalog().lookup(name)


# --- the system check: a view or admin narrowing on its own is refused -------------------


def _narrowed(queryset: QuerySet[Any]) -> QuerySet[Any]:
    return queryset.exclude(sealed=True)


class NarrowingViewSet(ResourceViewSet):
    """The adopter's viewset: it hid sealed claims from the detail route only."""

    model = Claim

    def get_queryset(self) -> QuerySet[Any]:
        return _narrowed(super().get_queryset())


class NarrowingObjectViewSet(ResourceViewSet):
    model = Claim

    def get_object(self) -> Any:
        claim = super().get_object()
        if claim.sealed:
            raise LookupError(claim)
        return claim


class FilteringViewSet(ResourceViewSet):
    model = Claim

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return _narrowed(queryset)


class NarrowingAdmin(AffordanceAdminMixin, admin.ModelAdmin):  # type: ignore[misc]
    def get_queryset(self, request: Any) -> QuerySet[Any]:
        return _narrowed(super().get_queryset(request))


def _refused(messages: list[Any]) -> list[tuple[str, Any]]:
    return [(message.id, message.obj) for message in messages if message.id == "affordances.E032"]


@pytest.mark.parametrize(
    "viewset",
    [NarrowingViewSet, NarrowingObjectViewSet, FilteringViewSet],
    ids=lambda view: view.__name__,
)
def test_a_resource_view_narrowing_on_its_own_is_refused(project: None, viewset: type) -> None:
    router = ResourceRouter()
    router.register("claims", viewset)
    urlpatterns[:] = [path("api/", include(router.urls))]
    try:
        with override_settings(ROOT_URLCONF=__name__):
            messages = check_rest_face()
    finally:
        urlpatterns.clear()
    assert _refused(messages) == [("affordances.E032", viewset)]
    (message,) = [message for message in messages if message.id == "affordances.E032"]
    assert message.hint is not None
    assert "QUERYSET" in message.hint
    assert "(user, request)" in message.hint


def test_an_admin_narrowing_on_its_own_is_refused(project: None) -> None:
    refused = NarrowingAdmin(Claim, admin.AdminSite(name="narrowing")).check()
    assert _refused(refused) == [("affordances.E032", NarrowingAdmin)]
    assert "QUERYSET" in str(refused[-1].hint)


def test_the_librarys_own_views_and_admins_pass(project: None) -> None:
    assert _refused(check_rest_face()) == []
    assert _refused(claims_api.ClaimAdmin(Claim, claims_api.site).check()) == []
