"""The caller's permissions kept across requests (affordances.capabilities): the
authentication backend ``CachedModelBackend`` over a shared cache (issues 41, 50 C1, 51).

A second request by the same non-superuser makes no permission query; a permission,
group membership, group permission or flag changed through any ORM path is seen by the
very next request — in another process too; what sends no signal is seen after
``forget()``; other backends, superusers, inactive users and a failing cache answer
exactly as Django does; ``ModelBackend``'s private per-user caches are never written.
With a cache kept per process (LocMem) or none, nothing is kept: ``check`` warns (W013)
and ``forget_capabilities`` says it cannot reach the other processes.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances import capabilities, operations
from affordances.catalog import get_catalog
from affordances.checks import check_settings
from tests.generic import api as ticket_app
from tests.generic.models import Ticket
from tests.mcp_wire import Wire

PERM = "generic.escalate_ticket"
User = get_user_model()
ROOT = Path(__file__).resolve().parent.parent


def _permission_queries(captured: CaptureQueriesContext) -> list[str]:
    # ModelBackend's two queries both read auth_permission; nothing else here does.
    return [q["sql"] for q in captured.captured_queries if '"auth_permission"' in q["sql"]]


CACHED = "affordances.capabilities.CachedModelBackend"
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
# ModelBackend's per-user-object caches (django/contrib/auth/backends.py): never written
# by the library.
DJANGO_CACHES = ("_perm_cache", "_user_perm_cache", "_group_perm_cache")
FILE_CACHE = "django.core.cache.backends.filebased.FileBasedCache"
LOCMEM = "django.core.cache.backends.locmem.LocMemCache"


@pytest.fixture(autouse=True)
def cached(tmp_path: Path) -> Iterator[BaseCache]:
    """The project the backend is for: CachedModelBackend over a shared cache (files, as
    every process of one host shares them; a directory per test)."""
    with override_settings(
        CACHES={
            "default": {"BACKEND": LOCMEM},
            "capabilities": {"BACKEND": FILE_CACHE, "LOCATION": str(tmp_path / "cache")},
        },
        AUTHENTICATION_BACKENDS=[CACHED],
        AFFORDANCES={**django_settings.AFFORDANCES, "CAPABILITIES_CACHE": "capabilities"},
    ):
        assert capabilities.setup().on
        yield caches["capabilities"]


def _answer(user: Any, perm: str = PERM) -> tuple[bool, int]:
    """What a fresh request's user object answers, and the permission queries it took."""
    fresh = User.objects.get(pk=user.pk)
    with CaptureQueriesContext(connection) as captured:
        held = fresh.has_perm(perm)
    if capabilities.setup().on:  # off, it is ModelBackend, which keeps its own
        assert not set(DJANGO_CACHES) & set(vars(fresh)), "ModelBackend's caches written"
    return held, len(_permission_queries(captured))


def _holds(user: Any) -> bool:
    """The answer of the next request — checked against Django's own, uncached."""
    held, _ = _answer(user)
    fresh = User.objects.get(pk=user.pk)
    django = fresh.is_active and (fresh.is_superuser or ModelBackend().has_perm(fresh, PERM))
    assert held == django, "the kept answer differs from Django's"
    return held


@pytest.fixture
def ann(db: None) -> Any:
    return User.objects.create_user("ann")


@pytest.fixture
def permission(db: None) -> Permission:
    return Permission.objects.get(content_type__app_label="generic", codename="escalate_ticket")


@pytest.fixture
def group(permission: Permission) -> Group:
    group = Group.objects.create(name="escalators")
    group.permissions.add(permission)
    return group


# --- the faces: no permission query on the second request ----------------------------


@pytest.fixture
def tickets(db: None) -> Iterator[None]:
    models = {"generic.Ticket": ticket_app.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


def _detail(user: Any, ticket: Ticket) -> tuple[list[str], dict[str, Any]]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(user)}")
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/v2/tickets/{ticket.pk}/")
    assert response.status_code == 200, response.content
    return _permission_queries(captured), response.json()


def _tools_list(user: Any) -> tuple[list[str], list[str]]:
    wire = Wire(str(AccessToken.for_user(user)), path="/agents/mcp")
    with CaptureQueriesContext(connection) as captured:
        tools = [tool["name"] for tool in wire.tools()]
    return _permission_queries(captured), tools


def test_a_second_request_makes_no_permission_query(tickets: None, ann: Any, group: Group):
    ann.groups.add(group)
    ticket = Ticket.objects.create(assignee="ann")

    first, body = _detail(ann, ticket)
    second, again = _detail(ann, ticket)
    listed, tools = _tools_list(ann)

    assert len(first) == 2  # ModelBackend's: the user's, the groups'
    assert second == [] and listed == []
    assert again == body
    assert "escalate_ticket" in [a["name"] for a in body["affordances"]]
    assert "escalate_ticket" in tools


def test_the_next_request_sees_a_revocation_on_every_face(tickets: None, ann: Any, group: Group):
    ann.groups.add(group)
    ticket = Ticket.objects.create(assignee="ann")
    _detail(ann, ticket)
    _tools_list(ann)

    group.permissions.clear()

    queries, body = _detail(ann, ticket)
    assert len(queries) == 2
    assert "escalate_ticket" not in [a["name"] for a in body["affordances"]]
    assert "escalate_ticket" not in _tools_list(ann)[1]


# --- every ORM path that changes what a user holds -----------------------------------

Change = Callable[[Any, Permission, Group], None]


def _set_flag(name: str, value: bool) -> Change:
    def change(user: Any, perm: Permission, group: Group) -> None:
        setattr(user, name, value)
        user.save(update_fields=[name])

    return change


# (grant, revoke) pairs; in each, the group holds the permission unless the pair is
# about the group's permissions, and the user starts holding nothing.
PATHS: dict[str, tuple[Change, Change]] = {
    "user.user_permissions add/remove": (
        lambda u, p, g: u.user_permissions.add(p),
        lambda u, p, g: u.user_permissions.remove(p),
    ),
    "user.user_permissions set/clear": (
        lambda u, p, g: u.user_permissions.set([p]),
        lambda u, p, g: u.user_permissions.clear(),
    ),
    "user.user_permissions set/set": (
        lambda u, p, g: u.user_permissions.set([p]),
        lambda u, p, g: u.user_permissions.set([]),
    ),
    "permission.user_set add/remove": (
        lambda u, p, g: p.user_set.add(u),
        lambda u, p, g: p.user_set.remove(u),
    ),
    "permission.user_set set/clear": (
        lambda u, p, g: p.user_set.set([u]),
        lambda u, p, g: p.user_set.clear(),
    ),
    "user.groups add/remove": (
        lambda u, p, g: u.groups.add(g),
        lambda u, p, g: u.groups.remove(g),
    ),
    "user.groups set/clear": (
        lambda u, p, g: u.groups.set([g]),
        lambda u, p, g: u.groups.clear(),
    ),
    "group.user_set add/remove": (
        lambda u, p, g: g.user_set.add(u),
        lambda u, p, g: g.user_set.remove(u),
    ),
    "group.user_set set/clear": (
        lambda u, p, g: g.user_set.set([u]),
        lambda u, p, g: g.user_set.clear(),
    ),
    "group.user_set add / group delete": (
        lambda u, p, g: g.user_set.add(u),
        lambda u, p, g: g.delete(),
    ),
    "user.user_permissions add / permission delete": (
        lambda u, p, g: u.user_permissions.add(p),
        lambda u, p, g: p.delete(),
    ),
}
GROUP_PATHS: dict[str, tuple[Change, Change]] = {
    "group.permissions add/remove": (
        lambda u, p, g: g.permissions.add(p),
        lambda u, p, g: g.permissions.remove(p),
    ),
    "group.permissions set/clear": (
        lambda u, p, g: g.permissions.set([p]),
        lambda u, p, g: g.permissions.clear(),
    ),
    "permission.group_set add/remove": (
        lambda u, p, g: p.group_set.add(g),
        lambda u, p, g: p.group_set.remove(g),
    ),
    "permission.group_set set/clear": (
        lambda u, p, g: p.group_set.set([g]),
        lambda u, p, g: p.group_set.clear(),
    ),
}


def _cycle(user: Any, grant: Callable[[], None], revoke: Callable[[], None]) -> None:
    assert _answer(user) == (False, 2)  # loaded, and kept
    assert _answer(user) == (False, 0)  # from the cache
    grant()
    assert _holds(user) is True
    assert _answer(user) == (True, 0)
    revoke()
    assert _holds(user) is False


@pytest.mark.parametrize("path", PATHS)
def test_every_path_is_seen_by_the_next_request(
    path: str, ann: Any, permission: Permission, group: Group
):
    grant, revoke = PATHS[path]
    _cycle(ann, lambda: grant(ann, permission, group), lambda: revoke(ann, permission, group))


@pytest.mark.parametrize("path", GROUP_PATHS)
def test_every_path_of_group_permissions_is_seen_by_the_next_request(
    path: str, ann: Any, permission: Permission
):
    group = Group.objects.create(name="empty")
    ann.groups.add(group)
    grant, revoke = GROUP_PATHS[path]
    _cycle(ann, lambda: grant(ann, permission, group), lambda: revoke(ann, permission, group))


def test_is_active_is_seen_by_the_next_request(ann: Any, permission: Permission):
    ann.user_permissions.add(permission)
    assert _answer(ann) == (True, 2)
    assert _answer(ann) == (True, 0)
    _set_flag("is_active", False)(ann, permission, None)
    assert _holds(ann) is False
    _set_flag("is_active", True)(ann, permission, None)
    assert _holds(ann) is True
    assert _answer(ann) == (True, 0)


def test_is_superuser_is_seen_by_the_next_request(ann: Any, permission: Permission):
    assert _answer(ann) == (False, 2)
    _set_flag("is_superuser", True)(ann, permission, None)
    assert _holds(ann) is True
    _set_flag("is_superuser", False)(ann, permission, None)
    assert _holds(ann) is False
    assert _answer(ann) == (False, 0)


def test_a_full_save_and_a_delete_of_the_user_forget_it(ann: Any, permission: Permission):
    ann.user_permissions.add(permission)
    _answer(ann)
    key = capabilities._user_key("auth.user", ann.pk)
    version = caches["capabilities"].get(key)
    ann.first_name = "Ann"
    ann.save()
    assert caches["capabilities"].get(key) != version
    version = caches["capabilities"].get(key)
    ann.save(update_fields=["last_login"])  # what a login saves: no permission changed
    assert caches["capabilities"].get(key) == version
    User.objects.filter(pk=ann.pk).get().delete()
    assert caches["capabilities"].get(key) != version


def test_a_change_committed_after_a_stale_read_is_still_seen(
    ann: Any, permission: Permission, django_capture_on_commit_callbacks: Any
):
    # A concurrent request that read the old rows after the change bumped the versions
    # (its transaction not committed yet) kept them under the new versions: the bump
    # at commit makes that entry stale.
    _answer(ann)
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        ann.user_permissions.add(permission)
        cache = caches["capabilities"]
        everyone = cache.get(capabilities._all_key())
        own = cache.get(capabilities._user_key("auth.user", ann.pk))
        stale = (everyone, own, frozenset(), frozenset())
        cache.set(capabilities._entry_key("auth.user", ann.pk), stale)
    assert _answer(ann) == (False, 0)  # the stale entry, before the commit
    for callback in callbacks:
        callback()
    assert _answer(ann) == (True, 2)


# --- what sends no signal: forget() -------------------------------------------------


def _quiet(*args: str) -> None:
    call_command("forget_capabilities", *args, stdout=open(os.devnull, "w"))  # noqa: SIM115


Rows = Callable[[Any, Permission, Group, Group], Any]
ROW_PATHS: dict[str, tuple[Rows, Rows]] = {
    "user_permissions rows": (
        lambda u, p, holders, members: User.user_permissions.through.objects.bulk_create(
            [User.user_permissions.through(user=u, permission=p)]
        ),
        lambda u, p, holders, members: User.user_permissions.through.objects.filter(
            user=u
        ).delete(),
    ),
    "groups rows": (
        lambda u, p, holders, members: User.groups.through.objects.create(user=u, group=holders),
        lambda u, p, holders, members: User.groups.through.objects.filter(group=holders).delete(),
    ),
    "group permissions rows": (
        lambda u, p, holders, members: Group.permissions.through.objects.create(
            group=members, permission=p
        ),
        lambda u, p, holders, members: Group.permissions.through.objects.filter(
            group=members
        ).delete(),
    ),
}


@pytest.mark.parametrize("path", ROW_PATHS)
def test_through_rows_written_directly_are_seen_after_forget(
    path: str, ann: Any, permission: Permission, group: Group
):
    # Django sends no signal for the rows of an auto-created through model.
    members = Group.objects.create(name="members")
    ann.groups.add(members)
    grant, revoke = ROW_PATHS[path]
    assert _answer(ann) == (False, 2)

    grant(ann, permission, group, members)
    assert _answer(ann) == (False, 0)  # stale: the documented limitation
    capabilities.forget(ann)
    assert _holds(ann) is True

    revoke(ann, permission, group, members)
    assert _answer(ann) == (True, 0)
    _quiet()
    assert _holds(ann) is False


def test_update_and_raw_sql_are_seen_after_forget(ann: Any, permission: Permission):
    ann.user_permissions.add(permission)
    assert _answer(ann) == (True, 2)

    User.objects.filter(pk=ann.pk).update(is_active=False)  # no signal
    assert _answer(ann)[0] is False  # the flag is read from the fresh row anyway
    User.objects.filter(pk=ann.pk).update(is_active=True)
    assert _answer(ann) == (True, 0)

    Permission.objects.filter(pk=permission.pk).update(codename="renamed")  # no signal
    assert _answer(ann) == (True, 0)  # stale: the documented limitation
    capabilities.forget(ann)
    assert _answer(ann) == (False, 2)

    Permission.objects.filter(pk=permission.pk).update(codename="escalate_ticket")
    assert _answer(ann) == (False, 0)
    _quiet()
    assert _answer(ann) == (True, 2)

    with connection.cursor() as cursor:  # raw SQL: no signal
        cursor.execute(f"DELETE FROM {User.user_permissions.through._meta.db_table}")
    assert _answer(ann) == (True, 0)
    _quiet("--user", str(ann.pk))
    assert _answer(ann) == (False, 2)


def test_loaddata_in_a_process_reaching_the_cache_is_seen(ann: Any, group: Group, tmp_path: Path):
    # loaddata saves raw and sets the many-to-many rows through the manager: both signal.
    assert _answer(ann) == (False, 2)
    fixture = tmp_path / "ann.json"
    row = {"model": "auth.user", "pk": ann.pk, "fields": {"username": "ann", "password": ""}}
    row["fields"]["groups"] = [group.pk]
    fixture.write_text(json.dumps([row]))
    call_command("loaddata", str(fixture), verbosity=0)
    assert _holds(ann) is True


def test_deploy_how_to_lists_every_write_no_signal_announces():
    # Issue 50, D1: where an operator reads, each kind of write that leaves a revoked
    # permission working until forget_capabilities (the tests above show them unseen).
    text = (ROOT / "docs/howto/deploy.md").read_text()
    section = text[text.index("## Writes the capabilities cache does not see") :]
    for write in (
        "QuerySet.update()",
        "bulk_create()",
        "User.groups.through.objects.filter(",
        "raw SQL",
        "loaddata",
        "pg_restore",
        "another database or service",
        "forget_capabilities",
    ):
        assert write in section, write


def test_forget_drops_what_the_user_object_keeps(ann: Any, permission: Permission):
    assert not ann.has_perm(PERM)
    User.user_permissions.through.objects.bulk_create(
        [User.user_permissions.through(user=ann, permission=permission)]
    )
    assert not ann.has_perm(PERM)  # Django's own per-object cache
    capabilities.forget(ann)
    assert ann.has_perm(PERM)


# --- private attributes, other backends, superusers, inactive users -----------------


def test_modelbackends_private_caches_stay_unset_after_a_request(
    tickets: None, ann: Any, group: Group
):
    # The backend keeps the sets on an attribute of its own, through Django's public
    # backend API: ModelBackend's per-user caches are not written, kept or loaded.
    ann.groups.add(group)
    ticket = Ticket.objects.create(assignee="ann")
    for expected_queries in (2, 0):  # loaded and kept, then from the shared cache
        user = User.objects.get(pk=ann.pk)
        client = APIClient()
        client.force_authenticate(user)  # the request's user is this very object
        with CaptureQueriesContext(connection) as captured:
            response = client.get(f"/v2/tickets/{ticket.pk}/")
        assert response.status_code == 200, response.content
        assert "escalate_ticket" in [a["name"] for a in response.json()["affordances"]]
        assert len(_permission_queries(captured)) == expected_queries
        assert [name for name in DJANGO_CACHES if hasattr(user, name)] == []


def test_the_async_api_answers_from_the_same_sets(ann: Any, permission: Permission):
    ann.user_permissions.add(permission)
    _answer(ann)  # kept
    fresh = User.objects.get(pk=ann.pk)
    with CaptureQueriesContext(connection) as captured:
        assert async_to_sync(fresh.ahas_perm)(PERM)
        assert PERM in async_to_sync(fresh.aget_all_permissions)()
    assert _permission_queries(captured) == []
    assert [name for name in DJANGO_CACHES if hasattr(fresh, name)] == []


def test_the_backend_answers_no_object_permission(db: None):
    # Model-wide, as ModelBackend: the library does not evaluate per object for it.
    assert operations.object_permissions_configured() is False


class TellsBen:
    """A backend of its own (not ModelBackend): asked on every request, as always."""

    asked: list[str] = []

    def authenticate(self, request: Any, **credentials: Any) -> None:
        return None

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        self.asked.append(perm)
        return bool(user_obj.get_username() == "ben" and perm == PERM)


HERE = "tests.test_capabilities"


def test_another_backend_is_still_asked_on_every_request(db: None):
    ben = User.objects.create_user("ben")
    with override_settings(AUTHENTICATION_BACKENDS=[f"{HERE}.TellsBen", CACHED]):
        TellsBen.asked.clear()
        assert _answer(ben) == (True, 0)  # TellsBen said yes first: ours not asked
        assert _answer(ben, "generic.submit_expense") == (False, 2)  # both asked
        assert _answer(ben, "generic.submit_expense") == (False, 0)
        assert TellsBen.asked == [PERM, "generic.submit_expense", "generic.submit_expense"]


def test_superusers_inactive_and_anonymous_users_are_answered_as_today(db: None):
    from django.contrib.auth.models import AnonymousUser

    root = User.objects.create_superuser("root")
    gone = User.objects.create_user("gone", is_active=False)
    for user in (root, gone):
        assert _answer(user) == (user.is_superuser, 0)
        fresh = User.objects.get(pk=user.pk)
        assert fresh.get_all_permissions() == ModelBackend().get_all_permissions(
            User.objects.get(pk=user.pk)
        )
        assert not hasattr(fresh, capabilities._MEMO)  # never kept
    assert AnonymousUser().has_perm(PERM) is False


# --- the setting and a cache that fails ---------------------------------------------


class BrokenCache(BaseCache):
    """A cache that is down: every call raises, as a Redis client does."""

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)

    def _down(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("the cache is down")

    get = set = add = delete = get_many = set_many = clear = touch = _down


def _caches(**aliases: str) -> dict[str, dict[str, str]]:
    return {
        "default": {"BACKEND": LOCMEM},
        **{alias: {"BACKEND": backend} for alias, backend in aliases.items()},
    }


def _with_cache(alias: str | None) -> dict[str, Any]:
    return {**django_settings.AFFORDANCES, "CAPABILITIES_CACHE": alias}


def test_a_cache_that_is_down_falls_back_to_django(tickets: None, ann: Any, group: Group):
    ticket = Ticket.objects.create(assignee="ann")
    models = {"generic.Ticket": ticket_app.REGISTRATION}
    with override_settings(
        CACHES=_caches(down=f"{HERE}.BrokenCache"),
        AFFORDANCES={**_with_cache("down"), "MODELS": models},
    ):
        ann.groups.add(group)  # the bump fails: logged, the change goes through
        assert _answer(ann) == (True, 2)
        queries, body = _detail(ann, ticket)
        assert len(queries) == 2
        assert "escalate_ticket" in [a["name"] for a in body["affordances"]]
        with pytest.raises(ConnectionError):
            capabilities.forget(ann)  # an operator asking is told
        with pytest.raises(CommandError, match="failed"):
            _quiet()


# Caches that are not shared by every process (kept per process, or keeping nothing),
# and no cache: nothing is kept, the permissions are loaded on every request.
OFF = {
    "LocMem": ("local", LOCMEM),
    "Dummy": ("dummy", "django.core.cache.backends.dummy.DummyCache"),
    "None": (None, None),
}


@pytest.mark.parametrize("kind", OFF)
def test_without_a_shared_cache_nothing_is_kept(ann: Any, permission: Permission, kind: str):
    alias, backend = OFF[kind]
    ann.user_permissions.add(permission)
    caches_setting = _caches(**({alias: backend} if alias and backend else {}))
    with override_settings(CACHES=caches_setting, AFFORDANCES=_with_cache(alias)):
        assert not capabilities.setup().on
        assert _answer(ann) == (True, 2)
        assert _answer(ann) == (True, 2)
        ann.user_permissions.remove(permission)
        assert _answer(ann) == (False, 2)


def test_without_the_backend_nothing_is_kept(ann: Any, permission: Permission):
    # ModelBackend alone: the shared cache is named, but nothing asks for it.
    with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND]):
        assert not capabilities.setup().on
        ann.user_permissions.add(permission)  # no bump either
        assert _answer(ann) == (True, 2)
        assert _answer(ann) == (True, 2)


@pytest.mark.parametrize("value", ["nope", 3, ""])
def test_a_bad_cache_alias_is_e031(db: None, value: Any):
    with override_settings(AFFORDANCES=_with_cache(value)):
        assert [m.id for m in check_settings()] == ["affordances.E031"]


def _plain_check() -> list[str]:
    # `manage.py check` without --deploy.
    return [m.id for m in run_checks() if m.id == "affordances.W013"]


@pytest.mark.parametrize("kind", ["LocMem", "Dummy"])
def test_a_plain_check_warns_when_the_cache_is_not_shared(db: None, kind: str):
    alias, backend = OFF[kind]
    assert backend is not None
    with override_settings(CACHES=_caches(**{str(alias): backend}), AFFORDANCES=_with_cache(alias)):
        assert _plain_check() == ["affordances.W013"]


def test_a_plain_check_is_silent_when_shared_or_not_asked(db: None):
    assert _plain_check() == []  # the shared file cache
    with override_settings(AFFORDANCES=_with_cache(None)):
        assert _plain_check() == []
    with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND], CACHES=_caches()):
        assert _plain_check() == []  # a fresh project: LocMem, ModelBackend
    shared = "django.core.cache.backends.db.DatabaseCache"
    with override_settings(CACHES=_caches(shared=shared), AFFORDANCES=_with_cache("shared")):
        assert _plain_check() == []


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command("forget_capabilities", *args, stdout=out)
    return out.getvalue()


def test_forget_capabilities_says_it_cannot_with_a_per_process_cache(db: None):
    with override_settings(CACHES=_caches(local=LOCMEM), AFFORDANCES=_with_cache("local")):
        for args in ((), ("--user", "1")):
            with pytest.raises(CommandError, match="Cannot forget in every process"):
                _command(*args)


def test_forget_capabilities_reaches_the_shared_cache(ann: Any, permission: Permission):
    assert "every process" in _command("--user", str(ann.pk))
    with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND]):
        assert "is off" in _command()  # nothing kept, nothing to forget


def test_the_catalog_answers_as_before_for_every_user(tickets: None, ann: Any, group: Group):
    ann.groups.add(group)
    root = User.objects.create_superuser("root")
    catalog = get_catalog()
    for user in (ann, root):
        _answer(user)  # kept
        cached = [op.name for op in catalog.for_user(User.objects.get(pk=user.pk))]
        with override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND]):  # Django alone
            plain = [op.name for op in get_catalog().for_user(User.objects.get(pk=user.pk))]
        assert cached == plain
        assert ("escalate_ticket" in cached) is True


def test_the_sessions_lazy_user_answers_from_the_cache(ann: Any, permission: Permission):
    from django.utils.functional import SimpleLazyObject

    ann.user_permissions.add(permission)
    _answer(ann)  # kept
    lazy = SimpleLazyObject(lambda: User.objects.get(pk=ann.pk))  # request.user's kind
    with CaptureQueriesContext(connection) as captured:
        assert lazy.has_perm(PERM)
    assert _permission_queries(captured) == []


# --- other processes: a user model of its own, a worker that stays alive -------------


def _env(database: Path, cache_url: str) -> dict[str, str]:
    env = {
        **os.environ,
        "CAPABILITIES_DATABASE": str(database),
        "CAPABILITIES_CACHE_URL": cache_url,
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def _child(database: Path, *steps: str, cache_url: str) -> list[tuple[bool, int]]:
    result = subprocess.run(
        [sys.executable, "-m", "tests.capabilities_child", *steps],
        cwd=ROOT,
        env=_env(database, cache_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [(line["held"], line["queries"]) for line in map(json.loads, result.stdout.splitlines())]


class Worker:
    """A process that stays alive between steps, as a gunicorn worker does: it keeps
    what it read while another process changes a permission."""

    def __init__(self, database: Path, cache_url: str, *steps: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.capabilities_child", *steps],
            cwd=ROOT,
            env=_env(database, cache_url),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def until_waiting(self) -> list[tuple[bool, int]]:
        """The checks printed until the worker waits (or ends)."""
        assert self.process.stdout is not None
        checks: list[tuple[bool, int]] = []
        for raw in self.process.stdout:
            line = json.loads(raw)
            if line.get("waiting"):
                return checks
            checks.append((line["held"], line["queries"]))
        return checks

    def go_on(self) -> list[tuple[bool, int]]:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        checks = self.until_waiting()
        _, errors = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, errors
        return checks

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def _a_removal_in_one_process_is_refused_in_the_other(tmp_path: Path, cache_url: str) -> None:
    """Issue 50, C1: the member, in a group holding the permission, is answered by a
    worker (which keeps what it can); another process — `manage.py shell` — removes her
    from the group; the worker's next request refuses."""
    database = tmp_path / "db.sqlite3"
    steps = ("setup", "join", "check", "check", "wait", "check", "check")
    worker = Worker(database, cache_url, *steps)
    try:
        before = worker.until_waiting()
        assert _child(database, "leave", cache_url=cache_url) == []  # the shell
        after = worker.go_on()
    finally:
        worker.stop()
    shared = not cache_url.startswith("locmem://")
    # Kept in a shared cache: no query on the second request; per process: none kept.
    assert before == [(True, 2), (True, 0 if shared else 2)]
    assert after == [(False, 2), (False, 0 if shared else 2)]


def test_a_group_removal_in_one_process_is_refused_in_another_with_a_shared_cache(
    tmp_path: Path,
):
    cache_url = f"file://{tmp_path / 'cache'}"
    _a_removal_in_one_process_is_refused_in_the_other(tmp_path, cache_url)


def test_a_group_removal_in_one_process_is_refused_in_another_with_locmem(tmp_path: Path):
    # A fresh project's cache: kept per process, so the backend keeps nothing in it.
    _a_removal_in_one_process_is_refused_in_the_other(tmp_path, "locmem://")


def test_a_user_model_of_its_own(tmp_path: Path):
    checks = _child(
        tmp_path / "db.sqlite3",
        *("setup", "check", "check", "grant", "check", "check", "revoke", "check"),
        cache_url=f"file://{tmp_path / 'cache'}",
    )
    assert checks == [(False, 2), (False, 0), (True, 2), (True, 0), (False, 2)]


@pytest.fixture
def redis_url() -> Iterator[str]:
    redis = pytest.importorskip("redis")
    client = redis.Redis(host="127.0.0.1", port=6379, db=14, socket_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as error:
        pytest.skip(f"no Redis answers on 127.0.0.1:6379 ({error})")
    client.flushdb()
    try:
        yield "redis://127.0.0.1:6379/14"
    finally:
        client.flushdb()
        client.close()


def test_with_redis_a_group_removal_in_one_process_is_refused_in_another(
    tmp_path: Path, redis_url: str
):
    _a_removal_in_one_process_is_refused_in_the_other(tmp_path, redis_url)
