"""The caller's model-wide permissions, kept across requests in a shared cache: the
authentication backend :class:`CachedModelBackend`.

Filtering the catalog and the affordances by capability asks ``user.has_perm(perm)``,
and Django's ``ModelBackend`` answers that by loading the user's permissions and its
groups' permissions: two queries per request (and per user object).
:class:`CachedModelBackend` is ``ModelBackend`` with the two sets —
``get_user_permissions`` and ``get_group_permissions``, what ``ModelBackend`` loads —
kept in the cache named by ``AFFORDANCES["CAPABILITIES_CACHE"]``. A project enables it
in place of ``ModelBackend``::

    AUTHENTICATION_BACKENDS = ["affordances.capabilities.CachedModelBackend"]

It overrides only the public permission methods of Django's backend API; the sets are
kept, per request, on an attribute of its own on the user object (never in
``ModelBackend``'s private per-user caches). Other backends are asked as always, in the
order of ``AUTHENTICATION_BACKENDS``; superusers, inactive users, anonymous users and
object permissions are answered exactly as ``ModelBackend`` answers them.

On only with a shared cache: a change is announced by bumping versions in the cache, so
the cache must be one every process reads. A cache kept inside each process
(``LocMemCache``) or keeping nothing (``DummyCache``) is not shared: with one the
backend caches nothing and every request loads the permissions, as ``ModelBackend``
does — and ``check`` says so (``affordances.W013``). Redis, Memcached, the database
cache and any other backend are taken as shared (a ``FileBasedCache`` is shared by the
processes of one host, or of several on a shared filesystem).

Freshness: an entry carries the two versions it was read under, one per user
(``user_permissions``, ``groups``, the user's own row) and one for everyone (a group's
permissions, a group or permission saved or deleted), and is used only while both
still hold. Every change through the ORM bumps them by signal: ``m2m_changed`` of the
three through tables, from both sides, ``post_clear`` included; ``post_save`` and
``post_delete`` of the user model, ``Group`` and ``Permission``. It bumps at once, and
again when the transaction commits, so a request that read the old rows while the
change was uncommitted cannot keep them. Versions are random tokens, not counters: a
version evicted or lost is re-created as a new token, and so invalidates, never
revives, what was kept under the old one.

What sends no signal is not seen until :func:`forget` (``manage.py
forget_capabilities``, which bumps the versions in the shared cache, so every process
sees it) or the entry's :data:`TIMEOUT`: ``QuerySet.update()``, ``bulk_create()``,
rows of a through table written or deleted through ``through.objects`` (Django sends no
model signal for an auto-created model), raw SQL, fixtures loaded with ``raw=True`` or
elsewhere. A cache that fails is logged and skipped: the permissions are loaded, as
without the cache, never a 500.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_backends, get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission, PermissionsMixin
from django.core.cache import BaseCache, caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from affordances import registry
from affordances.conf import settings

__all__ = [
    "PERMISSION_METHODS",
    "TIMEOUT",
    "CachedModelBackend",
    "Setup",
    "connect",
    "forget",
    "prime",
    "prime_many",
    "setup",
    "shared",
]

logger = logging.getLogger(__name__)

#: Seconds an entry is kept: what bounds a change no signal announced (``update()``,
#: ``bulk_create()``, a bump lost while the cache was down). A user reloads its two
#: sets at most once per period.
TIMEOUT = 300

_PREFIX = "affordances:capabilities:1"
# The backend's own per-request memo on the user object (as ModelBackend keeps its
# sets on it): the same request asks the shared cache once.
_MEMO = "_affordances_capabilities"

# The methods through which a backend derived from Django's ModelBackend answers a
# permission (for an object too: affordances.operations asks these of every backend).
PERMISSION_METHODS = (
    "has_perm",
    "get_all_permissions",
    "get_user_permissions",
    "get_group_permissions",
    "_get_permissions",
)


def shared(cache: BaseCache) -> bool:
    """Whether ``cache`` is one every process reads: anything but a per-process
    ``LocMemCache`` or a ``DummyCache`` (which keeps nothing)."""
    return not isinstance(cache, LocMemCache | DummyCache)


@dataclass(frozen=True)
class Setup:
    """What the settings ask of the capabilities cache, and whether it is on."""

    #: A :class:`CachedModelBackend` is in ``AUTHENTICATION_BACKENDS``.
    backend: bool
    #: ``CAPABILITIES_CACHE``: the alias of the cache, or None.
    alias: str | None
    #: The cache is shared by every process (:func:`shared`); False without one.
    shared: bool
    user_model: type[models.Model]

    @property
    def asked(self) -> bool:
        """The settings ask for the cache: the backend, and a cache named."""
        return self.backend and self.alias is not None

    @property
    def on(self) -> bool:
        """Asked, and the cache reaches every process."""
        return self.asked and self.shared

    def cache(self) -> BaseCache | None:
        """The shared cache, when on."""
        return caches[self.alias] if self.on and self.alias is not None else None


_setup: Setup | None = None


def setup() -> Setup:
    """The capabilities cache's :class:`Setup` (worked out once per settings)."""
    global _setup
    found = _setup
    if found is None:
        alias = settings.CAPABILITIES_CACHE
        found = Setup(
            backend=any(isinstance(b, CachedModelBackend) for b in get_backends()),
            alias=alias,
            shared=alias is not None and shared(caches[alias]),
            user_model=get_user_model(),
        )
        _setup = found
    return found


@registry.derived
def _forget_setup() -> None:
    # Worked out from AUTHENTICATION_BACKENDS, AUTH_USER_MODEL, CACHES and AFFORDANCES.
    global _setup
    _setup = None


def _label(user_model: type[models.Model]) -> str:
    return user_model._meta.label_lower


def _all_key() -> str:
    return f"{_PREFIX}:all"


def _user_key(label: str, pk: Any) -> str:
    return f"{_PREFIX}:version:{label}:{pk}"


def _entry_key(label: str, pk: Any) -> str:
    return f"{_PREFIX}:perms:{label}:{pk}"


@dataclass(frozen=True)
class _Kept:
    user: set[str]
    group: set[str]
    all: set[str]


def _load(user: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The two sets ``ModelBackend`` loads for a user that is not a superuser: its own
    permissions, its groups' (the same two queries, through the public ORM)."""

    def names(permissions: models.QuerySet[Permission]) -> frozenset[str]:
        rows = permissions.values_list("content_type__app_label", "codename").order_by()
        return frozenset(f"{app_label}.{codename}" for app_label, codename in rows)

    return (
        names(user.user_permissions.all()),
        names(Permission.objects.filter(group__in=user.groups.all())),
    )


def _read(user: Any, cache: BaseCache, label: str) -> tuple[frozenset[str], frozenset[str]]:
    """The user's two sets: from the cache when current there, else loaded and kept."""
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
        logger.warning("The capabilities cache failed; the permissions are loaded.", exc_info=True)
        return _load(user)
    if isinstance(entry, tuple) and len(entry) == 4 and entry[:2] == (everyone, own):
        return frozenset(entry[2]), frozenset(entry[3])
    # The versions were read before the rows: a change committed meanwhile bumped them,
    # so this entry is stale at once rather than kept under the new versions.
    user_perms, group_perms = _load(user)
    if everyone is not None and own is not None:
        try:
            cache.set(entry_key, (everyone, own, user_perms, group_perms), timeout=TIMEOUT)
        except Exception:
            logger.warning(
                "The capabilities cache failed to keep %s's permissions.", label, exc_info=True
            )
    return user_perms, group_perms


class CachedModelBackend(ModelBackend):
    """Django's ``ModelBackend``, with each user's permissions kept across requests in
    the shared cache ``AFFORDANCES["CAPABILITIES_CACHE"]`` (see the module).

    Use it in place of ``ModelBackend`` in ``AUTHENTICATION_BACKENDS`` (it logs users
    in as ``ModelBackend`` does). With the setting ``None`` or a cache that is not
    shared it is ``ModelBackend``, uncached."""

    # Model-wide only, as ModelBackend: asked for an object it answers nothing
    # (affordances.operations reads this rather than guessing from the overrides).
    supports_object_permissions = False

    def _kept(self, user_obj: Any, obj: Any) -> _Kept | None:
        """The user's sets, kept for this request; None where ``ModelBackend`` answers
        as it always does (an object, an inactive, anonymous or superuser, a user model
        without ``PermissionsMixin``, the cache off)."""
        if (
            obj is not None
            or not getattr(user_obj, "is_active", False)
            or getattr(user_obj, "is_anonymous", True)
            or not isinstance(user_obj, PermissionsMixin)
            or user_obj.is_superuser
            or user_obj.pk is None
        ):
            return None
        kept = user_obj.__dict__.get(_MEMO)
        if isinstance(kept, _Kept):
            return kept
        current = setup()
        cache = current.cache()
        if cache is None or not isinstance(user_obj, current.user_model):
            return None
        user_perms, group_perms = _read(user_obj, cache, _label(current.user_model))
        kept = _Kept(user=set(user_perms), group=set(group_perms), all={*user_perms, *group_perms})
        user_obj.__dict__[_MEMO] = kept
        return kept

    def get_user_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        kept = self._kept(user_obj, obj)
        return super().get_user_permissions(user_obj, obj) if kept is None else kept.user

    def get_group_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        kept = self._kept(user_obj, obj)
        return super().get_group_permissions(user_obj, obj) if kept is None else kept.group

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        kept = self._kept(user_obj, obj)
        return super().get_all_permissions(user_obj, obj) if kept is None else kept.all

    # The async API answers from the same sets (ModelBackend's own async methods would
    # load them into its private caches instead).
    async def aget_user_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return await sync_to_async(self.get_user_permissions)(user_obj, obj)

    async def aget_group_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return await sync_to_async(self.get_group_permissions)(user_obj, obj)

    async def aget_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        return await sync_to_async(self.get_all_permissions)(user_obj, obj)


def prime(user: Any) -> None:
    """Does nothing: :class:`CachedModelBackend` reads the shared cache on the first
    ``has_perm`` of a request. Kept for callers of the earlier design."""


def prime_many(users: Iterable[Any]) -> None:
    """Read the kept permissions of several users in one round trip to the shared cache:
    the callers of one event's listen streams, each checked at once. A user whose entry
    is current is then answered from its object, as after its first ``has_perm``; one
    whose entry is missing or stale is loaded on first use, as always. The same
    freshness rule as a single read; nothing when the cache is off."""
    current = setup()
    cache = current.cache()
    if cache is None:
        return
    label = _label(current.user_model)
    waiting = [
        user
        for user in users
        if isinstance(user, current.user_model)
        and isinstance(user, PermissionsMixin)
        and getattr(user, "is_active", False)
        and not user.is_superuser
        and user.pk is not None
        and _MEMO not in user.__dict__
    ]
    if not waiting:
        return
    keys = [_all_key()]
    for user in waiting:
        keys += [_user_key(label, user.pk), _entry_key(label, user.pk)]
    try:
        found = cache.get_many(keys)
    except Exception:
        logger.warning("The capabilities cache failed; the permissions are loaded.", exc_info=True)
        return
    everyone = found.get(_all_key())
    if everyone is None:
        return
    for user in waiting:
        own = found.get(_user_key(label, user.pk))
        entry = found.get(_entry_key(label, user.pk))
        if own is None or not (isinstance(entry, tuple) and len(entry) == 4):
            continue
        if entry[:2] == (everyone, own):
            user_perms, group_perms = frozenset(entry[2]), frozenset(entry[3])
            user.__dict__[_MEMO] = _Kept(
                user=set(user_perms), group=set(group_perms), all={*user_perms, *group_perms}
            )


def _token() -> str:
    return secrets.token_hex(8)


def _bump(keys: list[str]) -> None:
    cache = setup().cache()
    if cache is not None and keys:
        cache.set_many({key: _token() for key in keys}, timeout=None)


def forget(user: Any = None) -> None:
    """Forget the kept permissions of ``user`` (a user or its primary key), or of every
    user: the next request of each, in every process, loads them from the database.

    For changes no signal announces — ``QuerySet.update()``, ``bulk_create()``, a
    through table's rows, raw SQL, fixtures. A user object passed in also drops what
    the backend keeps on it for the current request. Nothing to do when the cache is
    off (see :func:`setup`); raises what the cache raises."""
    if user is None:
        keys = [_all_key()]
    else:
        pk = user.pk if isinstance(user, models.Model) else user
        keys = [_user_key(_label(get_user_model()), pk)]
        if isinstance(user, models.Model):
            user.__dict__.pop(_MEMO, None)
    _bump(keys)


def _changed(keys: list[str], using: str | None) -> None:
    """Bump ``keys`` now and again when the transaction on ``using`` commits."""
    if not keys or not setup().on:
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
        instance.__dict__.pop(_MEMO, None)  # this object answers anew too
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
