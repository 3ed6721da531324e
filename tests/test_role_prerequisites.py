"""Roles that show before an object does (issue 52, item 4).

With an object-permission backend, the catalog cannot know which objects a caller holds
an operation on, so it lists every operation some object might allow: each role saw
every transition. ``@operation(requires="app.perm")`` declares what a role needs before
any object is involved — a model-level permission asked without an object — so the
catalog and ``tools/list`` differ by role, while the object's rule still decides per
object. The same, with django-rules and with django-guardian as the object backend.

``clerk`` is the payout's assignee (the object's rule) without the desk's role;
``payer`` has both; ``other`` has the role, and no rule on this payout.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import rules
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import override_settings
from guardian.shortcuts import assign_perm
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.evaluation import Available, evaluate
from affordances.execution import perform
from affordances.problems import Problem
from tests.generic import payouts_api
from tests.generic.payouts import Payout
from tests.mcp_wire import Wire

BACKENDS = {
    "rules": [
        "rules.permissions.ObjectPermissionBackend",
        "django.contrib.auth.backends.ModelBackend",
    ],
    "guardian": [
        "django.contrib.auth.backends.ModelBackend",
        "guardian.backends.ObjectPermissionBackend",
    ],
}


@rules.predicate
def is_assignee(user: Any, payout: Payout | None) -> bool:
    # None: asked without an object — a rule of objects says no there (django-fsm).
    return payout is not None and payout.assignee == user.get_username()


@pytest.fixture(params=list(BACKENDS))
def backend(request: pytest.FixtureRequest, db: None) -> Iterator[str]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Payout": payouts_api.REGISTRATION},
    }
    rules.set_perm("generic.pay_payout", is_assignee)
    try:
        with override_settings(
            AFFORDANCES=affordances, AUTHENTICATION_BACKENDS=BACKENDS[request.param]
        ):
            importlib.reload(payouts_api)  # routes made anew from this catalog
            with override_settings(ROOT_URLCONF="tests.generic.payouts_api"):
                yield request.param
    finally:
        rules.remove_perm("generic.pay_payout")


@pytest.fixture
def people(backend: str) -> dict[str, Any]:
    users = get_user_model().objects
    people = {name: users.create_user(name, password="x") for name in ("clerk", "payer", "other")}
    desk = Group.objects.create(name="payout desk")
    desk.permissions.add(Permission.objects.get(codename="work_payout_desk"))
    for name in ("payer", "other"):
        people[name].groups.add(desk)
    return people


@pytest.fixture
def payout(backend: str, people: dict[str, Any]) -> Payout:
    """Assigned to the clerk and the payer: each holds the object's rule on it."""
    payout = Payout.objects.create(assignee="clerk")
    if backend == "guardian":
        for name in ("clerk", "payer"):
            assign_perm("generic.pay_payout", people[name], payout)
    return payout


def _fresh(user: Any) -> Any:
    return get_user_model().objects.get(pk=user.pk)  # no permission cache of an earlier ask


def _as(payout: Payout, assignee: str) -> None:
    Payout.objects.filter(pk=payout.pk).update(assignee=assignee)


def test_the_catalog_and_tools_list_differ_by_role(people: dict[str, Any], payout: Payout) -> None:
    catalog = get_catalog()
    for name, expected in {
        "clerk": {"hold_payout"},
        "payer": {"hold_payout", "pay_payout"},
        "other": {"hold_payout", "pay_payout"},
    }.items():
        known = {op.name for op in catalog.for_user(_fresh(people[name])) if op.is_transition}
        assert known == expected, name
        tools = {tool["name"] for tool in Wire(str(AccessToken.for_user(people[name]))).tools()}
        assert tools & {"hold_payout", "pay_payout"} == expected, name


def test_the_object_still_decides_for_those_with_the_role(
    backend: str, people: dict[str, Any], payout: Payout
) -> None:
    pay = get_catalog().lookup("pay_payout")
    hold = get_catalog().lookup("hold_payout")
    assert pay is not None and hold is not None
    if backend == "rules":
        _as(payout, "payer")  # the rule: the payout's assignee
    payout = Payout.objects.get(pk=payout.pk)  # protected state: read anew, not refreshed
    assert isinstance(evaluate(pay, payout, _fresh(people["payer"])), Available)
    assert evaluate(pay, payout, _fresh(people["other"])) is None  # the role, not the rule
    # The clerk holds the object's rule (guardian) but lacks the role: never shown.
    assert evaluate(pay, payout, _fresh(people["clerk"])) is None
    if backend == "guardian":
        assert isinstance(evaluate(hold, payout, _fresh(people["clerk"])), Available)


def test_a_run_without_the_role_is_refused_as_a_missing_operation(
    people: dict[str, Any], payout: Payout
) -> None:
    pay = get_catalog().lookup("pay_payout")
    assert pay is not None
    with pytest.raises(Problem) as refused:
        perform(
            operation=pay,
            pk=payout.pk,
            user=_fresh(people["clerk"]),  # the assignee: the object's rule says yes
            arguments={},
            via="api",
            represent=lambda instance: {"id": instance.pk},
        )
    assert refused.value.code.value == "not_found"
    assert Payout.objects.get(pk=payout.pk).state == "due"
    answer = Wire(str(AccessToken.for_user(people["clerk"]))).call(
        "tools/call", {"name": "pay_payout", "arguments": {"payoutId": payout.pk}}
    )
    assert answer["error"]["code"] == -32602  # an unknown tool, as for any other name


def test_requires_takes_permission_names_only() -> None:
    from affordances import operation

    for wrong in ("work_payout_desk", ["generic.a", 3], "a.b.c"):
        with pytest.raises(TypeError, match=r"app_label\.codename"):
            operation(title="Pay", requires=wrong)  # type: ignore[arg-type]
