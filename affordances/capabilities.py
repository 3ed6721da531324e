"""The caller's model-wide permissions, kept across requests in Django's cache.

Filtering the catalog and the affordances by capability asks ``user.has_perm(perm)``,
and Django's ``ModelBackend`` answers that by loading the user's permissions and its
groups' permissions: two queries per request (and per user object). This module keeps
exactly what ``ModelBackend`` loads — the two sets of ``"app_label.codename"`` strings,
``get_user_permissions`` and ``get_group_permissions`` — in the cache named by
``AFFORDANCES["CAPABILITIES_CACHE"]``, and :func:`prime` puts them on the request's user
object where ``ModelBackend`` keeps them itself (``_user_perm_cache``,
``_group_perm_cache``, ``_perm_cache``). Every answer is then Django's own, by Django's
own code, in the order of ``AUTHENTICATION_BACKENDS``: other backends (an object
backend, a backend of your own) are asked as they always are, per object too; only the
two queries are saved — for the affordances and for the project's own ``has_perm``
later in the request (a ``QUERYSET``, a rule).

Why only then: a backend derived from ``ModelBackend`` that answers differently (it
overrides one of the permission methods) reads the same per-object attributes, so with
one configured nothing is primed and Django loads as before. Superusers and inactive
users cost no query today (``has_perm`` answers from the flags, which are read from the
request's fresh user object), so they are never primed; neither is a user model without
``PermissionsMixin`` (``ModelBackend`` has nothing to load for it).

Freshness: an entry carries the two versions it was read under, one per user
(``user_permissions``, ``groups``, the user's own row) and one for everyone (a group's
permissions, a group or permission saved or deleted), and is used only while both
still hold. Every change through the ORM bumps them by signal: ``m2m_changed`` of the
three through tables, from both sides, ``post_clear`` included; ``post_save`` and
``post_delete`` of the user model, ``Group`` and ``Permission``. It bumps at once, and
again when the transaction commits, so a request that read the old rows while the
change was uncommitted cannot keep them. The versions live in the shared cache, so the
next request in any worker sees the change. Versions are random tokens, not counters:
a version evicted or lost is re-created as a new token, and so invalidates, never
revives, what was kept under the old one.

What sends no signal is not seen until :func:`forget` (``manage.py
forget_capabilities``) or the entry's :data:`TIMEOUT`: ``QuerySet.update()``,
``bulk_create()``, rows of a through table written or deleted through
``through.objects`` (Django sends no model signal for an auto-created model), raw SQL.
A cache that fails is logged and skipped: Django is asked, as without this module,
never a 500.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_backends, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, PermissionsMixin
from django.core.cache import BaseCache, caches
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from affordances import registry
from affordances.conf import settings

__all__ = ["PERMISSION_METHODS", "TIMEOUT", "connect", "forget", "primable", "prime"]

logger = logging.getLogger(__name__)

#: Seconds an entry is kept: what bounds a change no signal announced (``update()``,
#: ``bulk_create()``, a bump lost while the cache was down). A user reloads its two
#: sets at most once per period.
TIMEOUT = 300

_PREFIX = "affordances:capabilities:1"
# ModelBackend's per-user-object caches (django/contrib/auth/backends.py); the test
# "primed user asks no query" fails should Django rename them.
_USER_CACHE = "_user_perm_cache"
_GROUP_CACHE = "_group_perm_cache"
_ALL_CACHE = "_perm_cache"
_CACHES = (_USER_CACHE, _GROUP_CACHE, _ALL_CACHE)

# The methods through which a backend derived from Django's ModelBackend answers a
# permission (for an object too: affordances.operations asks these of every backend).
PERMISSION_METHODS = (
    "has_perm",
    "get_all_permissions",
    "get_user_permissions",
    "get_group_permissions",
    "_get_permissions",
)
# ...and those through which a subclass could load other sets than ModelBackend's: one
# that overrides any of them is not cached.
_PERMISSION_METHODS = (*PERMISSION_METHODS, "_get_user_permissions", "_get_group_permissions")


def _answers_as_model_backend(backend: Any) -> bool:
    return isinstance(backend, ModelBackend) and all(
        getattr(type(backend), name, None) is getattr(ModelBackend, name)
        for name in _PERMISSION_METHODS
    )


@dataclass(frozen=True)
class _Plan:
    """What the configured backends allow (worked out once per setting)."""

    #: The backend loading the sets on a miss; None: nothing is primed.
    loader: ModelBackend | None
    user_model: type[models.Model]


_plan: _Plan | None = None


def _get_plan() -> _Plan:
    global _plan
    plan = _plan
    if plan is None:
        backends = [b for b in get_backends() if isinstance(b, ModelBackend)]
        # Prime only where every backend reading ModelBackend's attributes is
        # ModelBackend in all but authentication (AllowAllUsersModelBackend,
        # RemoteUserBackend): otherwise the primed sets could differ from its answer.
        usable = bool(backends) and all(_answers_as_model_backend(b) for b in backends)
        plan = _Plan(loader=ModelBackend() if usable else None, user_model=get_user_model())
        _plan = plan
    return plan


@registry.derived
def _forget_plan() -> None:
    # Worked out from AUTHENTICATION_BACKENDS and AUTH_USER_MODEL.
    global _plan
    _plan = None


def _cache() -> BaseCache | None:
    alias = settings.CAPABILITIES_CACHE
    return None if alias is None else caches[alias]


def _label(user_model: type[models.Model]) -> str:
    return user_model._meta.label_lower


def _all_key() -> str:
    return f"{_PREFIX}:all"


def _user_key(label: str, pk: Any) -> str:
    return f"{_PREFIX}:version:{label}:{pk}"


def _entry_key(label: str, pk: Any) -> str:
    return f"{_PREFIX}:perms:{label}:{pk}"


def primable(user: Any) -> bool:
    """Whether :func:`prime` would put anything on ``user``: an active user of
    ``AUTH_USER_MODEL`` with ``PermissionsMixin``, not a superuser, whose permissions
    ``ModelBackend`` has not loaded yet, with the cache on and backends that allow it."""
    if (
        not getattr(user, "is_authenticated", False)
        or not isinstance(user, PermissionsMixin)
        or not getattr(user, "is_active", False)
        or user.is_superuser
        or user.pk is None
        or any(hasattr(user, name) for name in _CACHES)
    ):
        return False
    plan = _get_plan()
    return (
        plan.loader is not None
        and isinstance(user, plan.user_model)
        and settings.CAPABILITIES_CACHE is not None
    )


def prime(user: Any) -> None:
    """Put ``user``'s permissions, as ``ModelBackend`` would load them, on the user object
    — from the shared cache when they are current there, else loaded by ``ModelBackend``
    (its two queries) and kept for the next request. A no-op for a user
    :func:`primable` rejects; cache errors are logged and leave Django to load them."""
    if not primable(user):
        return
    cache = _cache()
    plan = _get_plan()
    loader = plan.loader
    assert cache is not None and loader is not None  # primable() said so
    # The user model's label, as the receivers and forget() have it (not type(user):
    # the session's request.user is a lazy object).
    label = _label(plan.user_model)
    all_key, user_key, entry_key = _all_key(), _user_key(label, user.pk), _entry_key(label, user.pk)
    try:
        found = cache.get_many([all_key, user_key, entry_key])
        everyone, own = found.get(all_key), found.get(user_key)
        if everyone is None or own is None:
            # First use, or evicted: a new token (add() never overwrites a bump racing
            # with it), then what is there now.
            cache.add(all_key, _token(), timeout=None)
            cache.add(user_key, _token(), timeout=None)
            versions = cache.get_many([all_key, user_key])
            everyone, own = versions.get(all_key), versions.get(user_key)
        entry = found.get(entry_key)
    except Exception:
        logger.warning(
            "The capabilities cache failed; Django loads the permissions.", exc_info=True
        )
        return
    if everyone is None or own is None:
        return  # a cache that keeps nothing (DummyCache): as without it
    if isinstance(entry, tuple) and len(entry) == 4 and entry[:2] == (everyone, own):
        user_perms, group_perms = set(entry[2]), set(entry[3])
        setattr(user, _USER_CACHE, user_perms)
        setattr(user, _GROUP_CACHE, group_perms)
        setattr(user, _ALL_CACHE, user_perms | group_perms)
        return
    # Loaded by ModelBackend itself, which keeps them on the user object as always; the
    # versions were read before, so a change committed meanwhile makes this entry stale.
    user_perms = loader.get_user_permissions(user)
    group_perms = loader.get_group_permissions(user)
    try:
        cache.set(
            entry_key,
            (everyone, own, frozenset(user_perms), frozenset(group_perms)),
            timeout=TIMEOUT,
        )
    except Exception:
        logger.warning(
            "The capabilities cache failed to keep %s's permissions.", label, exc_info=True
        )


def _token() -> str:
    return secrets.token_hex(8)


def _bump(keys: list[str]) -> None:
    cache = _cache()
    if cache is not None and keys:
        cache.set_many({key: _token() for key in keys}, timeout=None)


def forget(user: Any = None) -> None:
    """Forget the kept permissions of ``user`` (a user or its primary key), or of every
    user: the next request of each loads them from the database.

    For changes no signal announces — ``QuerySet.update()`` of a user's ``is_active``,
    ``bulk_create()`` on a through table, raw SQL. A user object passed in also drops
    the permissions ``ModelBackend`` keeps on it. Raises what the cache raises."""
    if user is None:
        keys = [_all_key()]
    else:
        pk = user.pk if isinstance(user, models.Model) else user
        keys = [_user_key(_label(get_user_model()), pk)]
        if isinstance(user, models.Model):
            for name in _CACHES:
                user.__dict__.pop(name, None)
    _bump(keys)


def _changed(keys: list[str], using: str | None) -> None:
    """Bump ``keys`` now and again when the transaction on ``using`` commits."""
    if settings.CAPABILITIES_CACHE is None or not keys:
        return

    def bump() -> None:
        try:
            _bump(keys)
        except Exception:
            # The change itself must go through (a revocation above all); what was kept
            # expires after TIMEOUT.
            logger.exception("The capabilities cache missed a permission change: %s", keys)

    bump()
    if using is not None and transaction.get_connection(using).in_atomic_block:
        transaction.on_commit(bump, using=using)


def _users(pks: Iterable[Any]) -> list[str]:
    label = _label(get_user_model())
    return [_user_key(label, pk) for pk in pks]


# --- signals ------------------------------------------------------------------------

_FLAGS = frozenset({"is_active", "is_superuser"})
_POST = frozenset({"post_add", "post_remove", "post_clear"})


def _on_user_m2m(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, using: str, **kwargs: Any
) -> None:
    # user.user_permissions / user.groups (forward: instance is the user), or
    # permission.user_set / group.user_set (reverse: pk_set the users; none on clear).
    if action not in _POST:
        return
    if not reverse:
        _changed(_users([instance.pk]), using)
    elif pk_set:
        _changed(_users(pk_set), using)
    else:
        _changed([_all_key()], using)


def _on_group_m2m(sender: Any, action: str, using: str, **kwargs: Any) -> None:
    # group.permissions / permission.group_set: every member, either side.
    if action in _POST:
        _changed([_all_key()], using)


def _on_user_saved(
    sender: Any, instance: Any, using: str, update_fields: Any = None, **kwargs: Any
) -> None:
    # A save naming its fields (update_last_login's) changes no permission unless it
    # names a flag; any other save may have changed is_active or is_superuser.
    if update_fields is not None and not _FLAGS & set(update_fields):
        return
    _changed(_users([instance.pk]), using)


def _on_user_deleted(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
    _changed(_users([instance.pk]), using)


def _on_everyone(sender: Any, using: str, **kwargs: Any) -> None:
    # A group or a permission saved or deleted (a renamed codename, a cascade to members).
    _changed([_all_key()], using)


def connect() -> None:
    """Connect the receivers that bump the versions (``AffordancesConfig.ready``)."""
    user_model = get_user_model()
    uid = "affordances.capabilities"
    post_save.connect(_on_user_saved, sender=user_model, dispatch_uid=f"{uid}.user.save")
    post_delete.connect(_on_user_deleted, sender=user_model, dispatch_uid=f"{uid}.user.delete")
    for model in (Group, Permission):
        name = model._meta.label_lower
        post_save.connect(_on_everyone, sender=model, dispatch_uid=f"{uid}.{name}.save")
        post_delete.connect(_on_everyone, sender=model, dispatch_uid=f"{uid}.{name}.delete")
    # The through tables' own rows send nothing (Django sends no model signal for an
    # auto-created model): through.objects.create()/delete() are forget()'s, as update().
    m2m_changed.connect(
        _on_group_m2m, sender=Group.permissions.through, dispatch_uid=f"{uid}.group.m2m"
    )
    if not issubclass(user_model, PermissionsMixin):
        return  # no permissions of its own: ModelBackend loads nothing for it
    for field_name in ("user_permissions", "groups"):
        through = user_model._meta.get_field(field_name).remote_field.through  # type: ignore[union-attr]
        m2m_changed.connect(_on_user_m2m, sender=through, dispatch_uid=f"{uid}.{field_name}.m2m")
