"""What a caller holds on the objects of one page: ``user.has_perm(perm, obj)`` exactly as
Django answers it, each permission asked once per object, batched where a backend allows.

A list asks an object-permission backend (django-rules, django-guardian, your own) only
where the caller's model-level rights left the answer to the object
(:meth:`affordances.operations.Holding.on`): an operation held model-wide, or not at all,
asks no object, nor does one whose role prerequisite (``requires=``) the caller lacks.
What is left is asked through :class:`PageAnswers`, one per page and caller:

- **once per permission and object**: the answer is kept for the page, keyed by the
  permission, the object's class and its primary key (never by ``id()``, which a
  collected object hands on); operations sharing a permission ask it once per row;
- **Django's own rule, without its per-call cost**: ``PermissionsMixin.has_perm`` answers
  yes for an active superuser, else asks each backend of ``AUTHENTICATION_BACKENDS`` in
  order — the first yes wins, a ``PermissionDenied`` is a no. Django builds the backends
  anew for every call; here they are built once per page, and a backend whose code
  answers no for every object (Django's ``ModelBackend`` and ``BaseBackend`` and this
  library's ``CachedModelBackend``, not overridden where it matters) is not asked. A user
  model with its own ``has_perm`` is asked through it, row by row, as before;
- **django-guardian in two queries a page** (when ``GUARDIAN_AUTO_PREFETCH`` is off; with
  it on guardian keeps every permission of the user on the user object already): what
  ``ObjectPermissionChecker.get_perms`` reads for one object — the codenames of the
  permissions of the object's content type granted on it to the user, and to the user's
  groups — read for every object of the page at once, then answered as its
  ``ObjectPermissionBackend.has_perm`` does. Not ``ObjectPermissionChecker.prefetch_perms``:
  it does not limit the permissions to the object's content type as the per-object
  check does, so a grant of another model's permission (``assign_perm`` takes a
  ``Permission`` object as it is) would answer yes where ``has_perm`` says no;
- **django-rules** has no batch: its predicates are Python, called once per permission
  and object, with nothing else around them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.contrib.auth import get_backends, get_user_model
from django.contrib.auth.backends import BaseBackend, ModelBackend
from django.contrib.auth.models import PermissionsMixin
from django.core.exceptions import PermissionDenied
from django.db import models
from django.utils.encoding import force_str

from affordances.capabilities import CachedModelBackend

__all__ = ["PageAnswers", "answers_no_for_objects"]

# What a page is asked: a permission string (or django-fsm's callable) and one object.
Ask = Callable[[Any, Any], bool]
# One backend, asked as Django asks it: ``(perm, obj)`` → its answer (may raise
# PermissionDenied).
_Backend = Callable[[str, Any], bool]

# The methods whose code decides what a ModelBackend-like backend answers for an object:
# ModelBackend.has_perm asks BaseBackend.has_perm, which asks get_all_permissions, which
# ModelBackend answers with an empty set for any object before anything else.
_DECIDING = ("has_perm", "get_all_permissions", "get_user_permissions", "get_group_permissions")
_KNOWN_CODE = (ModelBackend, BaseBackend, CachedModelBackend, object)


def answers_no_for_objects(backend: Any) -> bool:
    """Whether ``backend.has_perm(user, perm, obj)`` is False for every object by its
    code: Django's ``ModelBackend`` (and ``AllowAllUsersModelBackend``, the remote-user
    ones), ``BaseBackend`` and :class:`~affordances.capabilities.CachedModelBackend`,
    where no other class of its MRO defines a method that decides the answer."""
    if not isinstance(backend, BaseBackend):
        return False
    for cls in type(backend).__mro__:
        if cls in _KNOWN_CODE:
            continue
        if any(name in vars(cls) for name in (*_DECIDING, "_kept")):
            return False
    return True


class PageAnswers:
    """``user.has_perm(permission, obj)`` (or django-fsm's callable ``permission(obj,
    user)``) for the objects of one page, each asked once (see the module).

    ``objects``: the page, which a batching backend reads at once on its first question.
    Lives as long as the page is evaluated: what it keeps is the page's answers, not a
    cache across requests (a permission granted between two requests is seen)."""

    __slots__ = ("_backends", "_everything", "_memo", "_objects", "_resolved", "user")

    def __init__(self, user: Any, objects: Sequence[Any] = ()) -> None:
        self.user = user
        self._objects = objects
        self._memo: dict[tuple[Any, type, Any], bool] = {}
        # Worked out on the first question (a page whose rows ask nothing builds nothing):
        # the backends to ask (None: ask user.has_perm itself), or every answer yes.
        self._resolved = False
        self._backends: list[_Backend] | None = None
        self._everything = False

    def held(self, permission: Any, instance: Any) -> bool:
        """Whether the caller holds ``permission`` on ``instance``: what django-fsm's
        ``Transition.has_perm`` asks of an object (a callable's answer, or
        ``user.has_perm(permission, instance)``)."""
        pk = instance.pk if isinstance(instance, models.Model) else None
        if pk is None:  # no identity to keep an answer under
            return self._ask(permission, instance)
        key = (permission, type(instance), pk)
        try:
            known = self._memo.get(key)
        except TypeError:  # a callable permission that cannot be a key
            return self._ask(permission, instance)
        if known is None:
            known = self._memo[key] = self._ask(permission, instance)
        return known

    def _ask(self, permission: Any, instance: Any) -> bool:
        if callable(permission):
            return bool(permission(instance, self.user))
        if not self._resolved:
            self._resolve()
        backends = self._backends
        if backends is None:
            if self._everything:
                return True
            return bool(self.user.has_perm(permission, instance))
        for has_perm in backends:
            try:
                if has_perm(permission, instance):
                    return True
            except PermissionDenied:
                return False
        return False

    def _resolve(self) -> None:
        """The backends to ask, as ``PermissionsMixin.has_perm`` asks them; none when the
        user answers its own way (a ``has_perm`` of its own) or is an active superuser."""
        self._resolved = True
        # The user's own has_perm, bound: PermissionsMixin's (neither the class nor the
        # object overrides it) on the user itself — through a lazy request.user too.
        method = getattr(self.user, "has_perm", None)
        if getattr(method, "__func__", None) is not PermissionsMixin.has_perm:
            return
        user: Any = method.__self__  # type: ignore[union-attr]
        if user.is_active and user.is_superuser:  # PermissionsMixin.has_perm's first rule
            self._everything = True
            return
        backends: list[_Backend] = []
        for backend in get_backends():
            if not hasattr(backend, "has_perm") or answers_no_for_objects(backend):
                continue
            guardian = _GuardianPage.of(backend, user, self._objects)
            backends.append(guardian.has_perm if guardian is not None else _bound(backend, user))
        self._backends = backends


def _bound(backend: Any, user: Any) -> _Backend:
    has_perm = backend.has_perm

    def ask(permission: str, instance: Any) -> bool:
        return bool(has_perm(user, permission, instance))

    return ask


# Objects per query of a batch: a page is at most a few hundred rows; a longer list is read
# in parts (SQLite's bound on a statement's parameters).
_CHUNK = 500


class _GuardianPage:
    """django-guardian's ``ObjectPermissionBackend.has_perm`` for one user and the objects
    of one page, their permissions read at once (see the module)."""

    __slots__ = (
        "_backend",
        "_content_type",
        "_ctypes",
        "_default_ctype",
        "_objects",
        "_perms",
        "user",
    )

    def __init__(self, backend: Any, user: Any, objects: Sequence[Any]) -> None:
        from django.utils.module_loading import import_string
        from guardian.conf import settings as guardian_settings
        from guardian.ctypes import get_default_content_type

        self._backend = backend
        self.user = user
        self._objects = objects
        self._content_type: Callable[[Any], Any] = import_string(guardian_settings.GET_CONTENT_TYPE)
        # Django's content types depend on the class only: one look-up per class.
        self._default_ctype = self._content_type is get_default_content_type
        self._ctypes: dict[type, Any] = {}
        # (content type id, primary key as text) → codenames; None until first asked.
        self._perms: dict[tuple[int, str], set[str]] | None = None

    @classmethod
    def of(cls, backend: Any, user: Any, objects: Sequence[Any]) -> _GuardianPage | None:
        """The batch for ``backend`` when it is django-guardian's own backend and guardian
        reads permissions per object (``GUARDIAN_AUTO_PREFETCH`` off), for a user of the
        user model; None: ask the backend as Django does."""
        kind = type(backend)
        if (kind.__module__, kind.__qualname__) != ("guardian.backends", "ObjectPermissionBackend"):
            return None
        from guardian.conf import settings as guardian_settings

        if guardian_settings.AUTO_PREFETCH or not isinstance(user, get_user_model()):
            return None
        return cls(backend, user, objects)

    def ctype(self, instance: Any) -> Any:
        if not self._default_ctype:
            return self._content_type(instance)
        kind = type(instance)
        found = self._ctypes.get(kind)
        if found is None:
            found = self._ctypes[kind] = self._content_type(instance)
        return found

    def has_perm(self, permission: str, instance: Any) -> bool:
        user = self.user
        if not isinstance(instance, models.Model) or not user.is_authenticated:
            # check_support's other cases (the anonymous user row): the backend's own.
            return bool(self._backend.has_perm(user, permission, instance))
        app_label, dot, codename = permission.partition(".")
        if not dot:
            codename = permission
        elif app_label != instance._meta.app_label:
            # The backend compares the content type's app label, or raises WrongAppError.
            return bool(self._backend.has_perm(user, permission, instance))
        # ObjectPermissionChecker.has_perm: an inactive user holds nothing, an active
        # superuser everything (PermissionsMixin.has_perm said so first already).
        if not user.is_active:
            return False
        if user.is_superuser:
            return True
        perms = self._perms
        if perms is None:
            perms = self._perms = self._read([*self._objects, instance])
        held = perms.get((self.ctype(instance).pk, force_str(instance.pk)))
        if held is None:  # not of the page (or no key): guardian's per-object check
            return bool(self._backend.has_perm(user, permission, instance))
        return codename in held

    def _read(self, objects: Iterable[Any]) -> dict[tuple[int, str], set[str]]:
        """For each object, what ``ObjectPermissionChecker.get_perms`` returns: the
        codenames of the permissions of its content type granted on it to the user, or to
        one of the user's groups. Two queries per content type and chunk of objects."""
        from guardian.utils import get_group_obj_perms_model, get_user_obj_perms_model

        tables: dict[type, tuple[Any, Any]] = {}  # per class: its two permission tables
        groups: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
        for instance in objects:
            if not isinstance(instance, models.Model) or instance.pk is None:
                continue
            kind = type(instance)
            found = tables.get(kind)
            if found is None:
                # Read from the class (guardian's functions take its objects, for it).
                found = tables[kind] = (
                    get_user_obj_perms_model(instance),
                    get_group_obj_perms_model(instance),
                )
            key = (self.ctype(instance), *found)
            groups.setdefault(key, {})[force_str(instance.pk)] = instance.pk
        perms: dict[tuple[int, str], set[str]] = {}
        for (ctype, user_model, group_model), pks in groups.items():
            for text in pks:
                perms[(ctype.pk, text)] = set()
            texts = list(pks)
            for start in range(0, len(texts), _CHUNK):
                chunk = {text: pks[text] for text in texts[start : start + _CHUNK]}
                for model, holder in (
                    (user_model, {"user": self.user}),
                    (group_model, {"group__in": self.user.groups.all()}),
                ):
                    for pk, codename in _granted(model, holder, ctype, chunk):
                        held = perms.get((ctype.pk, force_str(pk)))
                        if held is not None:  # else a key the database matched otherwise
                            held.add(codename)
        return perms


def _granted(
    model: Any, holder: dict[str, Any], ctype: Any, pks: dict[str, Any]
) -> Iterable[tuple[Any, str]]:
    """``(object key, codename)`` of each grant in ``model`` (a guardian permission table)
    to ``holder`` on the objects ``pks`` (their keys as text → as they are), of a
    permission of ``ctype`` — ``ObjectPermissionChecker``'s user or group filters, for
    many objects at once."""
    grants = model.objects.filter(permission__content_type=ctype, **holder)
    rows: Iterable[tuple[Any, str]]
    if model.objects.is_generic():
        grants = grants.filter(content_type=ctype, object_pk__in=list(pks))
        rows = grants.values_list("object_pk", "permission__codename").order_by()
    else:
        grants = grants.filter(content_object__in=list(pks.values()))
        rows = grants.values_list("content_object", "permission__codename").order_by()
    return rows
