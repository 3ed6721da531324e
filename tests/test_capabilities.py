"""The caller's permissions kept across requests (affordances.capabilities, issue 41).

A second request by the same non-superuser makes no permission query; a permission,
group membership, group permission or flag changed through any ORM path is seen by the
very next request; what sends no signal is seen after ``forget()``; other backends,
superusers, inactive users and a failing cache answer exactly as Django does.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances import capabilities
from affordances.catalog import get_catalog
from affordances.checks import check_capabilities_cache, check_settings
from tests.generic import api as ticket_app
from tests.generic.models import Ticket
from tests.mcp_wire import Wire

PERM = "generic.escalate_ticket"
User = get_user_model()
ROOT = Path(__file__).resolve().parent.parent


def _permission_queries(captured: CaptureQueriesContext) -> list[str]:
    # ModelBackend's two queries both read auth_permission; nothing else here does.
    return [q["sql"] for q in captured.captured_queries if '"auth_permission"' in q["sql"]]


def _answer(user: Any, perm: str = PERM) -> tuple[bool, int]:
    """What a fresh request's user object answers, and the permission queries it took."""
    fresh = User.objects.get(pk=user.pk)
    with CaptureQueriesContext(connection) as captured:
        capabilities.prime(fresh)
        held = fresh.has_perm(perm)
    return held, len(_permission_queries(captured))


def _holds(user: Any) -> bool:
    """The answer of the next request — checked against Django's own, uncached."""
    held, _ = _answer(user)
    uncached = User.objects.get(pk=user.pk)
    assert held == uncached.has_perm(PERM), "the primed answer differs from Django's"
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
    version = caches["default"].get(key)
    ann.first_name = "Ann"
    ann.save()
    assert caches["default"].get(key) != version
    version = caches["default"].get(key)
    ann.save(update_fields=["last_login"])  # what a login saves: no permission changed
    assert caches["default"].get(key) == version
    User.objects.filter(pk=ann.pk).get().delete()
    assert caches["default"].get(key) != version


def test_a_change_committed_after_a_stale_read_is_still_seen(
    ann: Any, permission: Permission, django_capture_on_commit_callbacks: Any
):
    # A concurrent request that read the old rows after the change bumped the versions
    # (its transaction not committed yet) kept them under the new versions: the bump
    # at commit makes that entry stale.
    _answer(ann)
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        ann.user_permissions.add(permission)
        cache = caches["default"]
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


def test_forget_drops_what_the_user_object_keeps(ann: Any, permission: Permission):
    assert not ann.has_perm(PERM)
    User.user_permissions.through.objects.bulk_create(
        [User.user_permissions.through(user=ann, permission=permission)]
    )
    assert not ann.has_perm(PERM)  # Django's own per-object cache
    capabilities.forget(ann)
    assert ann.has_perm(PERM)


# --- other backends, superusers, inactive users -------------------------------------


class GrantsEverythingToBen(ModelBackend):
    """A ModelBackend that answers differently: nothing may be primed for it."""

    def _get_user_permissions(self, user_obj: Any) -> Any:
        if user_obj.get_username() == "ben":
            return Permission.objects.all()
        return super()._get_user_permissions(user_obj)


class TellsBen:
    """A backend of its own (not ModelBackend): asked on every request, as always."""

    asked: list[str] = []

    def authenticate(self, request: Any, **credentials: Any) -> None:
        return None

    def has_perm(self, user_obj: Any, perm: str, obj: Any = None) -> bool:
        self.asked.append(perm)
        return bool(user_obj.get_username() == "ben" and perm == PERM)


HERE = "tests.test_capabilities"


@pytest.mark.parametrize("backend", [f"{HERE}.GrantsEverythingToBen"])
def test_a_modelbackend_answering_differently_is_never_primed(db: None, backend: str):
    ben = User.objects.create_user("ben")
    with override_settings(AUTHENTICATION_BACKENDS=[backend]):
        assert not capabilities.primable(User.objects.get(pk=ben.pk))
        assert _answer(ben) == (True, 2)  # its own answer and queries, as today
        assert _answer(ben) == (True, 2)


def test_another_backend_is_still_asked_on_every_request(db: None):
    ben = User.objects.create_user("ben")
    backends = [f"{HERE}.TellsBen", "django.contrib.auth.backends.ModelBackend"]
    with override_settings(AUTHENTICATION_BACKENDS=backends):
        TellsBen.asked.clear()
        assert _answer(ben) == (True, 2)  # loaded and kept; TellsBen said yes
        assert _answer(ben) == (True, 0)
        assert TellsBen.asked == [PERM, PERM]
        assert _answer(ben, "generic.submit_expense") == (False, 0)  # both asked


def test_superusers_and_inactive_users_are_answered_as_today(db: None):
    root = User.objects.create_superuser("root")
    gone = User.objects.create_user("gone", is_active=False)
    for user in (root, gone):
        fresh = User.objects.get(pk=user.pk)
        assert not capabilities.primable(fresh)
        assert _answer(user) == (user.is_superuser, 0)
        assert not hasattr(fresh, "_perm_cache")


def test_anonymous_and_already_loaded_users_are_left_alone(ann: Any):
    from django.contrib.auth.models import AnonymousUser

    assert not capabilities.primable(AnonymousUser())
    ann.has_perm(PERM)  # ModelBackend loaded it on this object
    assert not capabilities.primable(ann)


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
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
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


@pytest.mark.parametrize(
    ("alias", "backend"),
    [(None, None), ("dummy", "django.core.cache.backends.dummy.DummyCache")],
)
def test_no_cache_or_a_dummy_one_loads_on_every_request(
    ann: Any, permission: Permission, alias: str | None, backend: str | None
):
    ann.user_permissions.add(permission)
    caches_setting = _caches(**({alias: backend} if alias and backend else {}))
    with override_settings(CACHES=caches_setting, AFFORDANCES=_with_cache(alias)):
        assert _answer(ann) == (True, 2)
        assert _answer(ann) == (True, 2)


@pytest.mark.parametrize("value", ["nope", 3, ""])
def test_a_bad_cache_alias_is_e031(db: None, value: Any):
    with override_settings(AFFORDANCES=_with_cache(value)):
        assert [m.id for m in check_settings()] == ["affordances.E031"]


def test_a_per_process_cache_is_w013_under_deploy(db: None):
    assert [m.id for m in check_capabilities_cache()] == ["affordances.W013"]
    with override_settings(AFFORDANCES=_with_cache(None)):
        assert check_capabilities_cache() == []
    shared = "django.core.cache.backends.db.DatabaseCache"
    with override_settings(CACHES=_caches(shared=shared), AFFORDANCES=_with_cache("shared")):
        assert check_capabilities_cache() == []


def test_the_catalog_answers_as_before_for_every_user(
    tickets: None, ann: Any, group: Group, monkeypatch: pytest.MonkeyPatch
):
    ann.groups.add(group)
    root = User.objects.create_superuser("root")
    catalog = get_catalog()
    for user in (ann, root):
        _answer(user)  # kept
        primed = [op.name for op in catalog.for_user(User.objects.get(pk=user.pk))]
        with monkeypatch.context() as patch:
            patch.setattr(capabilities, "prime", lambda user: None)  # Django alone
            plain = [op.name for op in catalog.for_user(User.objects.get(pk=user.pk))]
        assert primed == plain
        assert ("escalate_ticket" in primed) is True


# --- another process: a user model of its own, and Redis shared by two processes ----


def _child(database: Path, *steps: str, cache_url: str = "locmem://") -> list[tuple[bool, int]]:
    env = {
        **os.environ,
        "CAPABILITIES_DATABASE": str(database),
        "CAPABILITIES_CACHE_URL": cache_url,
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run(
        [sys.executable, "-m", "tests.capabilities_child", *steps],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return [(line["held"], line["queries"]) for line in map(json.loads, result.stdout.splitlines())]


def test_a_user_model_of_its_own(tmp_path: Path):
    checks = _child(tmp_path / "db.sqlite3", "setup", "check", "check", "grant", "check", "check")
    assert checks == [(False, 2), (False, 0), (True, 2), (True, 0)]


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


def test_with_redis_a_change_in_one_process_is_seen_by_the_next(tmp_path: Path, redis_url: str):
    database = tmp_path / "db.sqlite3"
    # Process 1 loads and keeps; process 2 answers from Redis, then grants; process 3
    # (another worker) sees the grant at once, then answers from Redis.
    assert _child(database, "setup", "check", cache_url=redis_url) == [(False, 2)]
    assert _child(database, "check", "grant", cache_url=redis_url) == [(False, 0)]
    assert _child(database, "check", "check", cache_url=redis_url) == [(True, 2), (True, 0)]


def test_the_sessions_lazy_user_is_primed(ann: Any, permission: Permission):
    from django.utils.functional import SimpleLazyObject

    ann.user_permissions.add(permission)
    _answer(ann)  # kept
    lazy = SimpleLazyObject(lambda: User.objects.get(pk=ann.pk))  # request.user's kind
    with CaptureQueriesContext(connection) as captured:
        capabilities.prime(lazy)
        assert lazy.has_perm(PERM)
    assert _permission_queries(captured) == []
