"""Object permissions at list speed (issue 52, item 3).

A page asks an object-permission backend only what the caller's model-level rights (and
role prerequisites) leave to the object, each permission once per object, and — with
django-guardian — reads the page's grants in a constant number of queries. The answers
stay Django's: the lists equal django-fsm's own verdicts (``Transition.has_perm``,
``has_transition_perm``, which ask ``user.has_perm``), with django-rules, with
django-guardian (grants to the user, to its groups, of another model's permission, to an
inactive user), with both, and behind a backend that vetoes with ``PermissionDenied``.

``Expense`` (``tests.generic.models``): ``submit`` needs ``generic.submit_expense``,
``approve`` ``generic.review_expense``, ``reopen`` either (one per source) — three
operations sharing two permissions. ``Payout``: ``pay`` needs the role
``generic.work_payout_desk`` first.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import rules
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import AllowAllUsersModelBackend, BaseBackend, ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils.functional import SimpleLazyObject
from django_fsm import has_transition_perm
from guardian.backends import ObjectPermissionBackend as GuardianBackend
from guardian.shortcuts import assign_perm
from rest_framework.test import APIClient
from rules.permissions import ObjectPermissionBackend as RulesBackend

from affordances import capabilities
from affordances.capabilities import CachedModelBackend
from affordances.catalog import get_catalog
from affordances.compat.fsm import transition_meta
from affordances.entries import AffordanceLists
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.object_permissions import PageAnswers, answers_no_for_objects
from tests.generic import expenses as expenses_app
from tests.generic import payouts_api
from tests.generic.models import Expense
from tests.generic.payouts import Payout

MODEL = "django.contrib.auth.backends.ModelBackend"
RULES = "rules.permissions.ObjectPermissionBackend"
GUARDIAN = "guardian.backends.ObjectPermissionBackend"
VETO = "tests.test_object_permission_pages.Veto"
SETUPS = {
    "rules": [VETO, RULES, MODEL],
    "guardian": [MODEL, VETO, GUARDIAN],
    "both": [RULES, MODEL, GUARDIAN, VETO],
}
OPERATIONS = {"submit": "submit_expense", "approve": "approve_expense", "reopen": "reopen_expense"}
SUBMIT, REVIEW = "generic.submit_expense", "generic.review_expense"
VETOED = 13  # the amount of the expenses the veto backend refuses everything on


class Veto:
    """A backend that ends the question with ``PermissionDenied`` for some objects: Django
    then answers no, whatever the backends after it would say."""

    def authenticate(self, request: Any, **credentials: Any) -> None:
        return None

    def has_perm(self, user: Any, perm: str, obj: Any = None) -> bool:
        if isinstance(obj, Expense) and obj.amount == VETOED:
            raise PermissionDenied
        return False


# Every (rule, object) a django-rules predicate is asked, as (permission, primary key).
asked: list[tuple[str, Any]] = []


def _counted(permission: str, field: str) -> Any:
    @rules.predicate
    def rule(user: Any, obj: Any) -> bool:
        if obj is None:  # without an object: no (a rule used with django-fsm must)
            return False
        asked.append((permission, obj.pk))
        return bool(getattr(obj, field) == user.get_username())

    return rule


@pytest.fixture
def app_rules() -> Iterator[None]:
    rules.set_perm(SUBMIT, _counted(SUBMIT, "owner"))
    rules.set_perm(REVIEW, _counted(REVIEW, "reviewer"))
    rules.set_perm("generic.pay_payout", _counted("generic.pay_payout", "assignee"))
    yield
    for name in (SUBMIT, REVIEW, "generic.pay_payout"):
        rules.remove_perm(name)


def _registered(backends: list[str]) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {
            "generic.Expense": {**expenses_app.REGISTRATION, "MAX_PAGE_SIZE": 100},
            "generic.Payout": payouts_api.REGISTRATION,
        },
    }
    with override_settings(AFFORDANCES=affordances, AUTHENTICATION_BACKENDS=backends):
        importlib.reload(expenses_app)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.expenses"):
            yield


@pytest.fixture(params=list(SETUPS))
def setup(request: pytest.FixtureRequest, db: None, app_rules: None) -> Iterator[str]:
    for _ in _registered(SETUPS[request.param]):
        yield request.param


@pytest.fixture
def rules_only(db: None, app_rules: None) -> Iterator[None]:
    yield from _registered([RULES, MODEL])


@pytest.fixture
def guardian_only(db: None, app_rules: None) -> Iterator[None]:
    yield from _registered([MODEL, GUARDIAN])


def _permission(codename: str) -> Permission:
    return Permission.objects.get(content_type__app_label="generic", codename=codename)


@pytest.fixture
def people(db: None) -> dict[str, Any]:
    """ann and ben act on some expenses only (django-rules: owner and reviewer; guardian:
    grants — ben's review grants through a group), cat on none, max reviews every
    expense (model-wide), dan is inactive with ann's grants, eve holds a grant of
    another model's permission spelled like submit_expense, root is a superuser."""
    users = get_user_model().objects
    people = {name: users.create_user(name) for name in ("ann", "ben", "cat", "max", "dan", "eve")}
    people["dan"].is_active = False
    people["dan"].save()
    people["root"] = users.create_superuser("root")
    people["max"].user_permissions.add(_permission("review_expense"))
    return people


STATES = ("draft", "submitted", "approved")


def _expenses(people: dict[str, Any], count: int) -> list[Expense]:
    """``count`` expenses, states and owners mixed, some vetoed, with django-guardian's
    grants matching the django-rules predicates (owner: submit; reviewer: review)."""
    made = []
    for index in range(count):
        owner, reviewer = ("ann", "ben") if index % 2 else ("ben", "ann")
        amount = VETOED if index % 7 == 3 else 10 + index
        expense = Expense.objects.create(owner=owner, reviewer=reviewer, amount=amount)
        Expense.objects.filter(pk=expense.pk).update(state=STATES[index % 3])
        made.append(expense)
    reviewers, _ = Group.objects.get_or_create(name="reviewers")
    people["ben"].groups.add(reviewers)
    foreign, _ = Permission.objects.get_or_create(
        codename="submit_expense",
        content_type=ContentType.objects.get_for_model(Payout),
        defaults={"name": "Another model's permission, spelled alike"},
    )
    for expense in made:
        owner = people[expense.owner]
        assign_perm(SUBMIT, owner, expense)
        if expense.reviewer == "ann":
            assign_perm(REVIEW, people["ann"], expense)
        else:
            assign_perm(REVIEW, reviewers, expense)  # ben's, through his group
        if expense.owner == "ann":
            assign_perm(SUBMIT, people["dan"], expense)
    # Grants on the expenses of Payout's permission (guardian's bulk assignment takes a
    # Permission as it is): its per-object check reads the permissions of the object's
    # content type only — none of them is eve's.
    assign_perm(foreign, people["eve"], Expense.objects.filter(pk__in=[e.pk for e in made]))
    return made


def _fresh(user: Any) -> Any:
    return get_user_model().objects.get(pk=user.pk)  # no permissions cached on it


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(_fresh(user))
    return client


def _names(entries: list[dict[str, Any]]) -> set[str]:
    return {entry["name"] for entry in entries}


def _listed(user: Any, size: int) -> list[dict[str, Any]]:
    response = _api(user).get(f"/api/expenses/?page_size={size}")
    assert response.status_code == 200, response.content
    results: list[dict[str, Any]] = response.json()["results"]
    assert len(results) == size
    return results


def _oracle(user: Any, expense: Expense) -> tuple[set[str], set[str]]:
    """What django-fsm answers, through ``user.has_perm`` on fresh objects: available
    (``has_transition_perm``), shown unavailable (holds one of the method's transitions
    on the object, ``Transition.has_perm``)."""
    user, expense = _fresh(user), Expense.objects.get(pk=expense.pk)
    available, unavailable = set(), set()
    for method, name in OPERATIONS.items():
        bound = getattr(expense, method)
        meta = transition_meta(bound)
        assert meta is not None
        shown = any(t.has_perm(expense, user) for t in meta.transitions.values())
        if has_transition_perm(bound, user):
            available.add(name)
        elif shown:
            unavailable.add(name)
    return available, unavailable


# --- the answers are Django's ------------------------------------------------------------


def test_a_page_answers_what_django_fsm_answers(setup: str, people: dict[str, Any]) -> None:
    """Every user, every row: the list's verdicts are django-fsm's, and each entry is the
    one ``evaluate`` gives that object alone (reasons included)."""
    made = _expenses(people, 21)
    catalog = get_catalog()
    for who in people:
        rows = {row["id"]: row for row in _listed(people[who], len(made))}
        user = _fresh(people[who])
        for expense in made:
            row = rows[expense.pk]
            verdict = (_names(row["affordances"]), _names(row["unavailableAffordances"]))
            assert verdict == _oracle(people[who], expense), (setup, who, expense.amount)
            alone = Expense.objects.get(pk=expense.pk)
            reasons = {}
            for name in OPERATIONS.values():
                operation = catalog.lookup(name)
                assert operation is not None
                result = evaluate(operation, alone, user)
                if isinstance(result, Unavailable):
                    reasons[name] = result.reason
                elif isinstance(result, Available):
                    assert name in verdict[0]
            listed = {entry["name"]: entry["reason"] for entry in row["unavailableAffordances"]}
            assert listed == reasons, (setup, who, expense.pk)


def test_page_answers_are_user_has_perm(setup: str, people: dict[str, Any]) -> None:
    """``PageAnswers.held`` against ``user.has_perm`` itself, for each user, permission and
    object — through a lazy ``request.user`` too, and for a user whose ``has_perm`` is its
    own (asked as it is)."""
    made = _expenses(people, 14)
    page = [Expense.objects.get(pk=expense.pk) for expense in made]
    permissions = (SUBMIT, REVIEW, "generic.work_payout_desk", "generic.view_expense")
    for who in people:
        expected = {
            (permission, row.pk): _fresh(people[who]).has_perm(permission, row)
            for permission in permissions
            for row in page
        }
        for user in (_fresh(people[who]), SimpleLazyObject(lambda who=who: _fresh(people[who]))):
            answers = PageAnswers(user, page)
            for permission in permissions:
                for row in page:
                    assert answers.held(permission, row) is expected[(permission, row.pk)], (
                        setup,
                        who,
                        permission,
                        row.amount,
                    )

    own = _fresh(people["cat"])
    own.has_perm = lambda perm, obj=None: perm == SUBMIT  # type: ignore[method-assign]
    answers = PageAnswers(own, page)
    assert all(answers.held(SUBMIT, row) for row in page)
    assert not any(answers.held(REVIEW, row) for row in page)


# --- what is asked, and how often --------------------------------------------------------


def test_a_page_asks_each_permission_of_each_row_once(
    rules_only: None, people: dict[str, Any]
) -> None:
    """Three operations share two permissions: a row is asked each once (each operation
    asked them for itself: a permission twice per row), and only those the caller does
    not hold model-wide — max reviews everywhere, so his rows are asked submit_expense
    only; cat holds nothing model-wide (an object may grant him some), root everything."""
    made = _expenses(people, 12)
    pks = [expense.pk for expense in made]
    expected = {
        "ann": {(p, pk) for pk in pks for p in (SUBMIT, REVIEW)},
        "ben": {(p, pk) for pk in pks for p in (SUBMIT, REVIEW)},
        "cat": {(p, pk) for pk in pks for p in (SUBMIT, REVIEW)},
        "max": {(SUBMIT, pk) for pk in pks},
        "root": set(),
    }
    for who, wanted in expected.items():
        asked.clear()
        _listed(people[who], len(made))
        counted = Counter(asked)
        assert set(counted) == wanted, who
        assert set(counted.values()) <= {1}, (who, counted.most_common(3))


def test_an_operation_whose_role_the_caller_lacks_asks_no_object(
    rules_only: None, people: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pay`` needs the desk's role before any object: a caller without it is asked
    nothing of pay's object rule on any row, however many rows; one with it once per row.
    (Pay's rule gets a permission of its own here, so that the asks tell it apart from
    hold's.)"""
    rules.set_perm("generic.release_payout", _counted("generic.release_payout", "assignee"))
    try:
        pay = transition_meta(Payout.pay)
        assert pay is not None
        for fsm_transition in pay.transitions.values():
            monkeypatch.setattr(fsm_transition, "permission", "generic.release_payout")
        users = get_user_model().objects
        clerk, payer = users.create_user("clerk"), users.create_user("payer")
        payer.user_permissions.add(_permission("work_payout_desk"))
        payouts = [Payout.objects.create(assignee="clerk" if i % 2 else "payer") for i in range(8)]
        resource = get_catalog().resource_for(Payout)
        assert resource is not None
        for user, pay_asked in ((clerk, 0), (payer, len(payouts))):
            asked.clear()
            user = _fresh(user)
            operations = get_catalog().transitions_for(Payout)
            lists = AffordanceLists(None, user, resource, operations)
            page = list(Payout.objects.order_by("pk"))
            lists.prepare(page)
            for payout in page:
                lists(payout)
            counted = Counter(permission for permission, _ in asked)
            assert counted["generic.release_payout"] == pay_asked, user.username
            assert counted["generic.pay_payout"] == len(payouts), user.username  # hold's
    finally:
        rules.remove_perm("generic.release_payout")


def _page_queries(user: Any, size: int) -> int:
    client = _api(user)
    capabilities.forget()  # cold both times
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/api/expenses/?page_size={size}")
    assert response.status_code == 200
    assert len(response.json()["results"]) == size
    return len(captured.captured_queries)


@pytest.mark.parametrize("backend", ["rules", "guardian"])
def test_queries_are_constant_in_rows(
    backend: str, request: pytest.FixtureRequest, people: dict[str, Any]
) -> None:
    """10 rows or 50: the same queries, with either backend (django-guardian read two per
    question and object: 2 queries for each permission of each row)."""
    request.getfixturevalue("rules_only" if backend == "rules" else "guardian_only")
    _expenses(people, 50)
    _page_queries(people["ann"], 10)  # content types and the like, read once per process
    for who in ("ann", "ben", "max", "cat"):
        small, large = _page_queries(people[who], 10), _page_queries(people[who], 50)
        assert small == large, (backend, who, small, large)
    if backend == "guardian":
        # What the objects are asked costs two queries a page — the user's grants and its
        # groups' — over the same page without an object backend (nothing to ask).
        asking = _page_queries(people["ann"], 50)
        with override_settings(AUTHENTICATION_BACKENDS=[MODEL]):
            assert _page_queries(people["ann"], 50) + 2 == asking


def test_the_model_backends_answer_no_for_any_object() -> None:
    """Backends whose code answers no for every object are not asked per object; any
    other is, overridden where it decides."""

    class OwnHasPerm(ModelBackend):
        def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
            return True

    class OwnPermissions(CachedModelBackend):
        def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
            return {"generic.submit_expense"}

    class OwnUserPermissions(BaseBackend):
        def get_user_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
            return {"generic.submit_expense"}

    for backend in (ModelBackend(), AllowAllUsersModelBackend(), CachedModelBackend()):
        assert answers_no_for_objects(backend), backend
    assert answers_no_for_objects(BaseBackend())
    for backend in (
        OwnHasPerm(),
        OwnPermissions(),
        OwnUserPermissions(),
        RulesBackend(),
        GuardianBackend(),
        Veto(),
    ):
        assert not answers_no_for_objects(backend), backend
