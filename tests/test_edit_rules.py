"""Edits decided in the core, once, for every face (issue 52).

Which fields a caller may change on an object now is one answer
(:func:`affordances.edits.editable_now`): the affordance entry narrows the catalog's
stable schema to it (a field the state rules out is ``false`` in its constraints), and
its HAL-FORMS template, OPTIONS, MCP's results, execution and the admin's change form
follow. An edit takes a role prerequisite (``EDIT_REQUIRES``) as a transition takes
``requires=``: a caller lacking it finds the edit nowhere and gets the ``405`` of a
resource without edits. With an object backend, the edit shows only on the objects the
caller may change, in every list, template, OPTIONS and ``Allow``.

On the tests' ``Expense`` (``tests.generic.expenses``): ``amount`` is editable in draft
only, ``reviewer`` in every state.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import rules
from django.conf import settings as django_settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client, RequestFactory, override_settings
from rest_framework_simplejwt.tokens import AccessToken

from affordances.admin import AffordanceAdminMixin
from affordances.catalog import get_catalog
from affordances.checks import check_catalog
from affordances.models import AuditRecord
from affordances.names import HAL_FORMS_MEDIA_TYPE
from tests.generic import expenses as expenses_app
from tests.generic.models import Expense
from tests.mcp_wire import Wire

BY_STATE = {"draft": ["amount"], "*": ["reviewer"]}
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
RULES_BACKEND = "rules.permissions.ObjectPermissionBackend"


@contextmanager
def mounted(editable: Any, *, requires: Any = None, object_backend: bool = False) -> Iterator[None]:
    """The expense app, its registration declaring ``editable`` (None: nothing) and
    ``requires``; with django-rules granting ``change_expense`` to an expense's owner."""
    registration = dict(expenses_app.REGISTRATION)
    if editable is not None:
        registration["EDITABLE_FIELDS"] = editable
    if requires is not None:
        registration["EDIT_REQUIRES"] = requires
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Expense": registration}}
    backends = [RULES_BACKEND, MODEL_BACKEND] if object_backend else [MODEL_BACKEND]
    if object_backend:
        rules.set_perm("generic.change_expense", _owns)
    try:
        with override_settings(AFFORDANCES=affordances, AUTHENTICATION_BACKENDS=backends):
            importlib.reload(expenses_app)  # routes made anew from this catalog
            with override_settings(ROOT_URLCONF="tests.generic.expenses"):
                yield
    finally:
        if object_backend:
            rules.remove_perm("generic.change_expense")


@rules.predicate
def _owns(user: Any, expense: Expense | None) -> bool:
    return expense is not None and expense.owner == user.get_username()


def _user(name: str, *codenames: str) -> Any:
    user = get_user_model().objects.create_user(name, password="x", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="generic", codename__in=codenames)
    )
    return get_user_model().objects.get(pk=user.pk)  # no permission cache


def _headers(user: Any) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(user)}"}


def _detail(user: Any, pk: Any, **headers: str) -> Any:
    return Client().get(f"/api/expenses/{pk}/", **_headers(user), **headers)


def _patch(user: Any, pk: Any, body: dict[str, Any]) -> Any:
    return Client().patch(
        f"/api/expenses/{pk}/", json.dumps(body), content_type="application/json", **_headers(user)
    )


def _entry(entries: list[dict[str, Any]], name: str = "edit_expense") -> dict[str, Any] | None:
    return next((entry for entry in entries if entry["name"] == name), None)


def _names(entries: list[dict[str, Any]]) -> list[str]:
    return [entry["name"] for entry in entries]


def _wire(user: Any) -> Wire:
    return Wire(str(AccessToken.for_user(user)), path="/mcp")


class ExpenseAdmin(AffordanceAdminMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    pass


def _admin_editable(user: Any, expense: Expense) -> set[str]:
    request = RequestFactory().get("/")
    request.user = user
    model_admin = ExpenseAdmin(Expense, admin.AdminSite(name="edit_rules"))
    return model_admin.get_editable_fields(request, expense)


# --- 1. narrowed by state, decided in the core ------------------------------------------


@pytest.fixture
def by_state(db: None) -> Iterator[None]:
    with mounted(BY_STATE):
        yield


def test_the_affordance_narrows_to_the_fields_the_state_leaves(by_state) -> None:
    dee = _user("dee", "change_expense")
    draft = Expense.objects.create(owner="ann")
    submitted = Expense.objects.create(owner="ann", state="submitted")

    # The catalog (and the tool's schema) stays the per-caller contract: every field.
    catalog = Client().get("/api/operations/edit_expense/", **_headers(dee)).json()
    assert set(catalog["inputSchema"]["properties"]) == {
        "expenseId",
        "amount",
        "reviewer",
        "expectedVersion",
    }
    tool = _entry(_wire(dee).tools())
    assert tool is not None
    assert set(tool["inputSchema"]["properties"]) == {
        "expenseId",
        "amount",
        "reviewer",
        "expectedVersion",
    }

    # Draft: both may change, nothing narrowed.
    entry = _entry(_detail(dee, draft.pk).json()["affordances"])
    assert entry is not None and entry["constraints"] == {}

    # Submitted: the amount is ruled out, on every face.
    body = _detail(dee, submitted.pk).json()
    entry = _entry(body["affordances"])
    assert entry is not None
    assert entry["constraints"] == {"properties": {"amount": False}}
    compact = _detail(dee, submitted.pk, QUERY_STRING="affordances=compact").json()
    assert _entry(compact["affordances"])["constraints"] == {"properties": {"amount": False}}
    listed = Client().get("/api/expenses/", **_headers(dee)).json()["results"]
    in_list = next(item for item in listed if item["id"] == submitted.pk)
    assert _entry(in_list["affordances"])["constraints"] == {"properties": {"amount": False}}

    hal = _detail(dee, submitted.pk, HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE).json()
    template = hal["_templates"]["edit_expense"]
    assert {prop["name"] for prop in template["properties"]} == {"reviewer", "expectedVersion"}
    draft_hal = _detail(dee, draft.pk, HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE).json()
    draft_template = draft_hal["_templates"]["edit_expense"]
    assert {prop["name"] for prop in draft_template["properties"]} == {
        "amount",
        "reviewer",
        "expectedVersion",
    }

    options = Client().options(f"/api/expenses/{submitted.pk}/", **_headers(dee)).json()
    assert set(options["actions"]["PATCH"]) == {"reviewer"}
    page = _detail(dee, submitted.pk, HTTP_ACCEPT="text/html").content.decode()
    assert 'name="reviewer"' in page and 'name="amount"' not in page

    read = _wire(dee).tool("get_expense", {"expenseId": submitted.pk})
    mcp_entry = _entry(read["structuredContent"]["affordances"])
    assert mcp_entry is not None and mcp_entry["constraints"] == {"properties": {"amount": False}}

    # The admin's change form asks the same function.
    assert _admin_editable(dee, submitted) == {"reviewer"}
    assert _admin_editable(dee, draft) == {"amount", "reviewer"}


def test_a_field_the_state_rules_out_is_a_400_that_names_it_and_says_why(by_state) -> None:
    dee = _user("dee", "change_expense")
    submitted = Expense.objects.create(owner="ann", state="submitted", amount=10)
    why = ["Not editable while the expense is submitted; use an operation."]
    for amount in (20, 10):  # a change, and the value it holds: the constraint rules both out
        refused = _patch(dee, submitted.pk, {"amount": amount, "reviewer": "rae"})
        assert refused.status_code == 400, refused.content
        assert (refused.json()["code"], refused.json()["errors"]) == (
            "validation_error",
            {"amount": why},
        )
        result = _wire(dee).tool(
            "edit_expense", {"expenseId": submitted.pk, "amount": amount, "reviewer": "rae"}
        )
        assert result["isError"] is True
        assert result["structuredContent"]["errors"] == {"amount": why}
    assert not AuditRecord.objects.exists()
    done = _patch(dee, submitted.pk, {"reviewer": "rae", "expectedVersion": 1})
    assert done.status_code == 200, done.content
    assert Expense.objects.get(pk=submitted.pk).reviewer == "rae"


# --- 2. an edit's role prerequisite (EDIT_REQUIRES) -------------------------------------


def _everywhere(user: Any, expense: Expense) -> dict[str, Any]:
    """What each face says of the edit to ``user`` about ``expense``."""
    client, headers = Client(), _headers(user)
    wire = _wire(user)
    return {
        "catalog": "edit_expense" in client.get("/api/operations/", **headers).content.decode(),
        "entry": client.get("/api/operations/edit_expense/", **headers).status_code,
        "tools": "edit_expense" in _names(wire.tools()),
        "detail": "edit_expense" in _detail(user, expense.pk).content.decode(),
        "allow": "PATCH" in _detail(user, expense.pk)["Allow"],
        "hal": "edit_expense"
        in _detail(user, expense.pk, HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE).content.decode(),
        "browsable": "edit_expense"
        in _detail(user, expense.pk, HTTP_ACCEPT="text/html").content.decode(),
        "options": "PATCH"
        in client.options(f"/api/expenses/{expense.pk}/", **headers).content.decode(),
        "mcp": "edit_expense" in json.dumps(wire.tool("get_expense", {"expenseId": expense.pk})),
        "admin": _admin_editable(user, expense),
    }


NOWHERE = {
    "catalog": False,
    "entry": 404,
    "tools": False,
    "detail": False,
    "allow": False,
    "hal": False,
    "browsable": False,
    "options": False,
    "mcp": False,
    "admin": set(),
}


@pytest.mark.parametrize("object_backend", [False, True], ids=["model-backend", "django-rules"])
def test_a_caller_lacking_the_edits_role_finds_it_nowhere(db, object_backend) -> None:
    # Both may change expenses (with django-rules: their own, and ann owns this one);
    # only the reviewer role may edit them.
    change = () if object_backend else ("change_expense",)
    rae = _user("rae", *change, "review_expense")
    ann = _user("ann", *change)
    expense = Expense.objects.create(owner="ann")
    with mounted(None):
        without_edits = _patch(ann, expense.pk, {"reviewer": "x"})
    with mounted(["reviewer"], requires="generic.review_expense", object_backend=object_backend):
        assert get_catalog().lookup("edit_expense").prerequisites == ("generic.review_expense",)
        assert _everywhere(ann, expense) == NOWHERE
        refused, missing = _patch(ann, expense.pk, {"reviewer": "x"}), _patch(ann, 987654, {})
        assert refused.status_code == missing.status_code == 405
        assert refused.content == missing.content == without_edits.content
        assert refused["Allow"] == missing["Allow"] == without_edits["Allow"]
        call = _wire(ann).call(
            "tools/call", {"name": "edit_expense", "arguments": {"expenseId": expense.pk}}
        )
        unknown = _wire(ann).call("tools/call", {"name": "edit_nothing", "arguments": {}})
        assert call["error"] == unknown["error"]

        seen = _everywhere(rae, expense)
        if object_backend:  # rae owns nothing: the object's rule still decides
            assert (seen["catalog"], seen["tools"], seen["detail"]) == (True, True, False)
        else:
            assert all(seen[face] for face in ("catalog", "tools", "detail", "hal", "allow"))
            assert seen["admin"] == {"reviewer"}
            assert _patch(rae, expense.pk, {"reviewer": "rae"}).status_code == 200
    assert Expense.objects.get(pk=expense.pk).reviewer == ("" if object_backend else "rae")


@pytest.mark.parametrize("malformed", ["review_expense", ["generic.a.b"], 3, {"x": "y"}])
def test_a_malformed_edit_requires_is_refused(db, malformed) -> None:
    registration = {
        **expenses_app.REGISTRATION,
        "EDITABLE_FIELDS": ["reviewer"],
        "EDIT_REQUIRES": malformed,
    }
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Expense": registration}}
    with override_settings(AFFORDANCES=affordances):
        messages = check_catalog()
    assert [m.id for m in messages] == ["affordances.E001"]
    assert "EDIT_REQUIRES" in messages[0].msg


# --- 5. an object backend: the edit only where the object grants it ---------------------


def test_with_an_object_backend_no_face_shows_the_edit_on_an_object_not_granted(db) -> None:
    ann, ben = _user("ann"), _user("ben")
    with mounted(BY_STATE, object_backend=True):
        draft = Expense.objects.create(owner="ann")
        submitted = Expense.objects.create(owner="ann", state="submitted")
        # Ann's own: offered where the state leaves a field, a reason where it leaves none.
        own = _everywhere(ann, draft)
        assert all(own[face] for face in ("detail", "allow", "hal", "browsable", "options", "mcp"))
        assert own["admin"] == {"amount", "reviewer"}
        assert _entry(_detail(ann, submitted.pk).json()["affordances"])["constraints"] == {
            "properties": {"amount": False}
        }

        for expense in (draft, submitted):
            seen = _everywhere(ben, expense)
            # The catalog lists it (ben may own an expense); this object shows it nowhere:
            # not among the affordances, not as a refusal, not in Allow, HAL-FORMS,
            # OPTIONS, MCP's result or the admin's change form.
            assert (seen["catalog"], seen["tools"]) == (True, True)
            assert {
                face: seen[face] for face in NOWHERE if face not in ("catalog", "entry", "tools")
            } == {
                face: NOWHERE[face] for face in NOWHERE if face not in ("catalog", "entry", "tools")
            }
            refused, missing = _patch(ben, expense.pk, {"reviewer": "x"}), _patch(ben, 987654, {})
            # Not his: as a missing expense is (as a transition he does not hold is).
            assert refused.status_code == missing.status_code == 404
            assert (refused.content, refused["Allow"]) == (missing.content, missing["Allow"])
            wire = _wire(ben)
            not_his = wire.tool("edit_expense", {"expenseId": expense.pk, "reviewer": "x"})
            absent = wire.tool("edit_expense", {"expenseId": 987654, "reviewer": "x"})
            assert not_his["structuredContent"] == absent["structuredContent"]
    assert not AuditRecord.objects.exists()
