"""Object-level permission backends: every face agrees with django-fsm (issue 35, item 3).

django-rules is the object-permission backend here: ``generic.submit_expense`` is held
by an expense's owner, ``generic.review_expense`` by its reviewer — predicates that
answer False without an object, as a predicate used with django-fsm must (django-fsm
asks ``has_perm(perm)`` too, and a yes there grants every object). ``Expense.reopen``
has two ``@transition`` decorators: from ``submitted`` with the owner's permission,
from ``approved`` with the reviewer's.

For every user, expense and transition, the core, REST (detail, list, the action route
and its OPTIONS), MCP (``get_expense``, ``tools/call``), HAL-FORMS and the admin (change
page, operation page) answer what django-fsm answers: available exactly when
``has_transition_perm`` says yes (its state, conditions and permission — the object's
first, then the model's), shown exactly when the caller holds one of the method's
transitions on the object (``Transition.has_perm``). A caller holding an operation on
no object sees it on no object.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import rules
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection, transaction
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django_fsm import has_transition_perm
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances import capabilities
from affordances.catalog import get_catalog
from affordances.entries import AffordanceLists
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.operations import object_permissions_configured
from tests.generic import expenses as expenses_app
from tests.generic.models import Expense
from tests.mcp_wire import Wire

OBJECT_BACKENDS = [
    "rules.permissions.ObjectPermissionBackend",
    "django.contrib.auth.backends.ModelBackend",
]
MODEL_BACKEND = ["django.contrib.auth.backends.ModelBackend"]

# Expense method → its operation.
OPERATIONS = {"submit": "submit_expense", "approve": "approve_expense", "reopen": "reopen_expense"}
USERS = ("ann", "ben", "cat", "max", "root")
# The owner, the reviewer, the state and the amount of each expense.
EXPENSES = {
    "draft": ("ann", "ben", "draft", 10),
    "submitted": ("ann", "ben", "submitted", 10),
    "submitted-big": ("ben", "ann", "submitted", 5000),  # over the limit: a condition fails
    "approved": ("ann", "ben", "approved", 10),
    "approved-ben": ("ben", None, "approved", 10),
}

# The app's rules, as a project would write them (None: asked without an object).
asked_with_objects: list[tuple[str, int]] = []


@rules.predicate
def is_owner(user: Any, expense: Expense | None) -> bool:
    if expense is None:
        return False
    asked_with_objects.append(("owner", expense.pk))
    return bool(expense.owner == user.get_username())


@rules.predicate
def is_reviewer(user: Any, expense: Expense | None) -> bool:
    if expense is None:
        return False
    asked_with_objects.append(("reviewer", expense.pk))
    return bool(expense.reviewer == user.get_username())


@pytest.fixture
def app_rules() -> Iterator[None]:
    rules.set_perm("generic.submit_expense", is_owner)
    rules.set_perm("generic.review_expense", is_reviewer)
    yield
    rules.remove_perm("generic.submit_expense")
    rules.remove_perm("generic.review_expense")


def _project(backends: list[str]) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Expense": expenses_app.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances, AUTHENTICATION_BACKENDS=backends):
        importlib.reload(expenses_app)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.expenses"):
            yield


@pytest.fixture
def project(db: None, app_rules: None) -> Iterator[None]:
    """Expense registered, django-rules before Django's ModelBackend."""
    yield from _project(OBJECT_BACKENDS)


@pytest.fixture
def model_backend_project(db: None, app_rules: None) -> Iterator[None]:
    """The same, with Django's ModelBackend alone (the rules are there, unasked)."""
    yield from _project(MODEL_BACKEND)


def _permission(codename: str) -> Permission:
    return Permission.objects.get(content_type__app_label="generic", codename=codename)


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    """ann and ben hold permissions on some expenses only, cat on none, max holds
    ``review_expense`` model-wide (ModelBackend), root is a superuser. All may open the
    admin's expense pages (``view_expense``)."""
    users = get_user_model().objects
    people = {
        name: users.create_user(name, password="x", is_staff=True)
        for name in ("ann", "ben", "cat", "max")
    }
    people["root"] = users.create_superuser("root", password="x")
    for user in people.values():
        user.user_permissions.add(_permission("view_expense"))
    people["max"].user_permissions.add(_permission("review_expense"))
    return people


@pytest.fixture
def expenses(people: dict[str, Any]) -> dict[str, Expense]:
    made = {}
    for key, (owner, reviewer, state, amount) in EXPENSES.items():
        expense = Expense.objects.create(owner=owner, reviewer=reviewer or "", amount=amount)
        Expense.objects.filter(pk=expense.pk).update(state=state)
        made[key] = expense
    return made


def _fresh(user: Any) -> Any:
    # A fresh user object: Django caches model-level permissions on the instance.
    return get_user_model().objects.get(pk=user.pk)


def _expense(expense: Expense) -> Expense:
    return Expense.objects.get(pk=expense.pk)


# --- the oracle: django-fsm's own functions ---------------------------------------------


def fsm_answer(user: Any, expense: Expense, method: str) -> tuple[bool, bool]:
    """``(shown, available)``: the caller holds one of the method's transitions on this
    expense (django-fsm's ``Transition.has_perm``); ``has_transition_perm`` says yes."""
    bound = getattr(expense, method)
    transitions = bound._django_fsm.transitions.values()
    shown = any(t.has_perm(expense, user) for t in transitions)
    return shown, has_transition_perm(bound, user)


def expected(user: Any, expense: Expense) -> tuple[set[str], set[str]]:
    """The operations shown available, and shown unavailable, on ``expense``."""
    available, unavailable = set(), set()
    for method, name in OPERATIONS.items():
        shown, ok = fsm_answer(_fresh(user), _expense(expense), method)
        if ok:
            available.add(name)
        elif shown:
            unavailable.add(name)
    return available, unavailable


def _cells(people: dict[str, Any], expenses: dict[str, Expense]) -> Iterator[tuple]:
    for who in USERS:
        for key, expense in expenses.items():
            yield who, key, people[who], expense, expected(people[who], expense)


# --- faces ------------------------------------------------------------------------------


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(_fresh(user))
    return client


def _names(entries: list[dict[str, Any]]) -> set[str]:
    return {entry["name"] for entry in entries}


class _Rollback(Exception):
    def __init__(self, answer: Any) -> None:
        self.answer = answer


def _undone(run: Any) -> Any:
    """``run()``'s answer, with whatever it wrote rolled back."""
    try:
        with transaction.atomic():
            raise _Rollback(run())
    except _Rollback as rollback:
        return rollback.answer


def test_the_rules_backend_answers_per_object(project: None) -> None:
    assert object_permissions_configured()
    with override_settings(AUTHENTICATION_BACKENDS=MODEL_BACKEND):
        assert not object_permissions_configured()


def test_evaluate_and_a_list_agree_with_django_fsm(project, people, expenses) -> None:
    catalog = get_catalog()
    resource = catalog.resource_for(Expense)
    rows = [_expense(expense) for expense in expenses.values()]
    for who in USERS:
        user = _fresh(people[who])
        operations = [op for op in catalog.transitions_for(Expense) if op.permits(user)]
        lists = AffordanceLists(None, user, resource, operations)
        for row in rows:
            results = [evaluate(op, row, user) for op in operations]
            available = {r.operation.name for r in results if isinstance(r, Available)}
            unavailable = {r.operation.name for r in results if isinstance(r, Unavailable)}
            assert (available, unavailable) == expected(user, row), (who, row)
            listed, refused = lists(row)
            assert (_names(listed), _names(refused)) == (available, unavailable), (who, row)


def test_rest_hal_forms_and_options_agree_with_django_fsm(project, people, expenses) -> None:
    for who, key, user, expense, (available, unavailable) in _cells(people, expenses):
        client = _api(user)
        detail = client.get(f"/api/expenses/{expense.pk}/")
        assert detail.status_code == 200
        body = detail.json()
        assert (_names(body["affordances"]), _names(body["unavailableAffordances"])) == (
            available,
            unavailable,
        ), (who, key)

        hal = client.get(f"/api/expenses/{expense.pk}/", HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE)
        assert hal.status_code == 200
        assert set(hal.json()["_templates"]) == available, (who, key)
        for name in set(OPERATIONS.values()) - available:
            assert name not in hal.content.decode(), (who, key, name)

        for method, name in OPERATIONS.items():
            route = f"/api/expenses/{expense.pk}/{method}/"
            options = client.options(route)
            assert ("POST" in options.json().get("actions", {})) is (name in available)
            run = _undone(lambda c=client, r=route: c.post(r, {}, format="json"))
            if name in available:
                assert run.status_code == 200, (who, key, name, run.content)
            elif name in unavailable:
                assert run.status_code == 409, (who, key, name, run.content)
                assert run.json()["code"] == "operation_not_available"
            else:
                # Exactly what a missing object answers.
                assert run.status_code == 404, (who, key, name, run.content)
                missing = client.post(f"/api/expenses/987654/{method}/", {}, format="json")
                assert (run.status_code, run.content) == (missing.status_code, missing.content)


def test_a_rest_list_agrees_with_django_fsm(project, people, expenses) -> None:
    for who in USERS:
        listing = _api(people[who]).get("/api/expenses/").json()["results"]
        by_id = {item["id"]: item for item in listing}
        for key, expense in expenses.items():
            item = by_id[expense.pk]
            assert (_names(item["affordances"]), _names(item["unavailableAffordances"])) == (
                expected(people[who], expense)
            ), (who, key)


def test_mcp_agrees_with_django_fsm(project, people, expenses) -> None:
    for who, key, user, expense, (available, unavailable) in _cells(people, expenses):
        wire = Wire(str(AccessToken.for_user(user)))
        read = wire.tool("get_expense", {"expenseId": expense.pk})
        assert read["isError"] is False, read
        body = read["structuredContent"]
        assert (_names(body["affordances"]), _names(body["unavailableAffordances"])) == (
            available,
            unavailable,
        ), (who, key)
        for name in OPERATIONS.values():
            arguments = {"expenseId": expense.pk}
            result = _undone(lambda w=wire, n=name, a=arguments: w.tool(n, a))
            if name in available:
                assert result["isError"] is False, (who, key, name, result)
            else:
                code = "operation_not_available" if name in unavailable else "not_found"
                assert result["isError"] is True, (who, key, name, result)
                assert result["structuredContent"]["code"] == code, (who, key, name, result)


def test_the_admin_agrees_with_django_fsm(project, people, expenses) -> None:
    for who, key, user, expense, (available, unavailable) in _cells(people, expenses):
        client = Client()
        client.force_login(user)
        page = client.get(f"/admin/generic/expense/{expense.pk}/change/")
        assert page.status_code == 200
        shown = (
            {entry["operation"].name for entry in page.context["affordances_available"]},
            {entry["operation"].name for entry in page.context["affordances_unavailable"]},
        )
        assert shown == (available, unavailable), (who, key)
        text = page.content.decode()
        for name in set(OPERATIONS.values()) - available - unavailable:
            assert name not in text, (who, key, name)
        for name in OPERATIONS.values():
            form = client.get(f"/admin/generic/expense/{expense.pk}/operation/{name}/")
            assert (form.status_code == 404) is (name not in available | unavailable)


def test_a_caller_holding_an_operation_on_no_object_sees_it_on_no_object(
    project, people, expenses
) -> None:
    """cat holds neither permission on any expense: no object face names an operation.
    The catalog cannot know that without asking every expense — django-rules answers
    False without an object whatever the objects say — so, with an object-permission
    backend configured, it lists what an object may grant (the module docstring of
    affordances.operations)."""
    cat = people["cat"]
    client = _api(cat)
    seen = [
        client.get("/api/expenses/").content,
        client.get("/api/expenses/", HTTP_ACCEPT=HAL_FORMS_MEDIA_TYPE).content,
    ]
    for expense in expenses.values():
        seen.append(client.get(f"/api/expenses/{expense.pk}/").content)
    text = b"\n".join(seen).decode()
    for name in OPERATIONS.values():
        assert name not in text
    catalog = [op["name"] for op in client.get("/api/operations/").json()["operations"]]
    wire = Wire(str(AccessToken.for_user(cat)))
    tools = [tool["name"] for tool in wire.tools()]
    assert catalog == tools == ["get_expense", "list_expenses", *OPERATIONS.values()]


def test_with_the_model_backend_alone_the_catalog_is_the_model_level_permissions(
    model_backend_project, people, expenses
) -> None:
    """No backend answers per object: only model-level permissions count, and each of a
    method's transitions does — max holds review_expense, so reopen (from approved) is
    his, though its first transition needs submit_expense."""
    assert not object_permissions_configured()
    names = {who: [op.name for op in get_catalog().for_user(_fresh(people[who]))] for who in USERS}
    assert names["cat"] == names["ann"] == ["get_expense", "list_expenses"]
    assert names["max"] == ["get_expense", "list_expenses", "approve_expense", "reopen_expense"]
    assert names["root"] == ["get_expense", "list_expenses", *OPERATIONS.values()]
    for who, key, user, expense, (available, unavailable) in _cells(people, expenses):
        body = _api(user).get(f"/api/expenses/{expense.pk}/").json()
        assert (_names(body["affordances"]), _names(body["unavailableAffordances"])) == (
            available,
            unavailable,
        ), (who, key)
    approved = _api(people["max"]).get(f"/api/expenses/{expenses['approved'].pk}/").json()
    assert _names(approved["affordances"]) == {"reopen_expense"}


def _list_queries(user: Any, size: int) -> tuple[int, list[tuple[str, int]]]:
    client = _api(user)
    asked_with_objects.clear()
    # Measured cold both times: the permissions kept across requests are forgotten
    # (tests/test_capabilities.py measures the warm request).
    capabilities.forget()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/api/expenses/?page_size={size}")
    assert response.status_code == 200
    assert len(response.json()["results"]) == size
    return len(captured.captured_queries), list(asked_with_objects)


def test_a_list_asks_objects_only_what_the_model_level_check_left_open(
    project, people, expenses
) -> None:
    """Constant queries per page; a permission held model-wide is never asked of an
    object (max: review_expense), one that is not is asked of each row once."""
    for index in range(5):
        Expense.objects.create(owner="ann", reviewer="ben", amount=index + 1)
    for who in ("ann", "max", "root"):
        small, _ = _list_queries(people[who], 5)
        large, large_asked = _list_queries(people[who], 10)
        assert small == large, (who, small, large)
        if who == "root":
            assert large_asked == []
        if who == "max":
            assert {kind for kind, _ in large_asked} == {"owner"}
        if who == "ann":
            # Asked of the rows: the objects decide for her.
            assert {kind for kind, _ in large_asked} == {"owner", "reviewer"}
