"""What the library tells listeners, and when: "this object changed", "your tools changed".

Every successful run (any face, ``perform()``, the admin's edits) writes one audit record
in its transaction (``affordances.execution``); writing it registers
:func:`object_changed`, which publishes once the transaction commits — a run rolled back
(a refusal, a failure, a preview) publishes nothing. A change to what a caller's
``tools/list`` answers publishes :class:`ToolsChanged`: the caller's groups or
permissions changed (``m2m_changed`` on the user's and the groups' through tables, after
commit), or the catalog was rebuilt in this process (a settings change, a reload).

The messages go through the broker named by ``AFFORDANCES["EVENTS_BROKER"]``
(:mod:`affordances.brokers`) to every process, where the MCP face's listen streams (and
the admin's notice) pick what each caller asked for and may see. An event says only
*that* something changed — a level trigger: a listener reads the object again, through
the same read path as every other read, and learns nothing from the event itself.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission, PermissionsMixin
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete, post_save

from affordances import registry

__all__ = [
    "ALL_CALLERS",
    "POLL_MILLISECONDS",
    "Event",
    "ObjectChanged",
    "ToolsChanged",
    "connect",
    "decode",
    "encode",
    "object_changed",
    "object_topic",
    "publish",
    "tools_changed",
    "tools_topic",
]

logger = logging.getLogger(__name__)

#: The ``user`` of a :class:`ToolsChanged` that concerns every caller (a group's
#: permissions, the catalog itself).
ALL_CALLERS = "*"

#: How often an open page — the admin's change notice, the browsable API's — asks for its
#: object's version (``affordances/admin/changed.js`` reads it from the page): a change
#: is shown within a second of its commit.
POLL_MILLISECONDS = 700


@dataclass(frozen=True)
class ObjectChanged:
    """A run committed on one object: its resource name, primary key and new version."""

    resource: str
    pk: str
    version: int | None

    @property
    def topic(self) -> str:
        return object_topic(self.resource, self.pk)


@dataclass(frozen=True)
class ToolsChanged:
    """What ``tools/list`` answers may have changed for one caller (or for every one)."""

    user: str  # the user's primary key, or ALL_CALLERS

    @property
    def topic(self) -> str:
        return tools_topic(self.user)


Event = ObjectChanged | ToolsChanged


def object_topic(resource: str, pk: Any) -> str:
    return f"object:{resource}:{pk}"


def tools_topic(user: Any) -> str:
    return f"tools:{user}"


def encode(event: Event) -> bytes:
    if isinstance(event, ObjectChanged):
        body: dict[str, Any] = {
            "kind": "object",
            "resource": event.resource,
            "pk": event.pk,
            "version": event.version,
        }
    else:
        body = {"kind": "tools", "user": event.user}
    return json.dumps(body, separators=(",", ":")).encode()


def decode(payload: bytes | str) -> Event | None:
    """The event of a broker message, or None for anything else (never raises)."""
    try:
        body = json.loads(payload)
        if body["kind"] == "object":
            version = body.get("version")
            return ObjectChanged(
                resource=str(body["resource"]),
                pk=str(body["pk"]),
                version=version if isinstance(version, int) else None,
            )
        if body["kind"] == "tools":
            return ToolsChanged(user=str(body["user"]))
    except (ValueError, KeyError, TypeError):
        pass
    return None


def publish(event: Event) -> None:
    """Hand ``event`` to the configured broker now; a failing broker is logged, never
    raised: the run it reports has committed, and its caller's answer must not change."""
    from affordances import brokers  # the broker is built from settings, on first use

    try:
        broker = brokers.get_broker()
    except ImproperlyConfigured:
        # Malformed AFFORDANCES (E001, E034 say so at start-up): no broker to tell. The
        # settings may be changing under a test or a reload that forgets the catalog.
        logger.warning("events not published: AFFORDANCES is malformed", exc_info=True)
        return
    if broker is None:
        return
    try:
        broker.publish(event.topic, encode(event))
    except Exception:
        logger.exception("publishing %s failed; listeners miss it", event.topic)


def object_changed(resource_name: str, instance: models.Model, version: Any) -> None:
    """Publish that ``instance`` changed once the current transaction commits (at once
    outside one); nothing if it rolls back."""
    pk = str(instance.pk)
    number = version if isinstance(version, int) else None

    def send() -> None:
        publish(ObjectChanged(resource_name, pk, number))

    transaction.on_commit(send, using=instance._state.db or "default")


def tools_changed(user: Any = ALL_CALLERS) -> None:
    """Publish that ``user``'s tools (a primary key, or every caller's) may have changed,
    once the current transaction commits."""
    key = str(user)
    transaction.on_commit(lambda: publish(ToolsChanged(key)))


# What a caller's tools/list depends on besides the code: its flags, its permissions, its
# groups and theirs (the same changes affordances.capabilities forgets its entries on).
_FLAGS = {"is_active", "is_superuser", "is_staff"}
_POST = {"post_add", "post_remove", "post_clear"}


def _on_user_m2m(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any
) -> None:
    if action not in _POST:
        return
    if not reverse:
        tools_changed(instance.pk)
    elif pk_set:
        for pk in pk_set:
            tools_changed(pk)
    else:
        tools_changed()


def _on_group_m2m(sender: Any, action: str, **kwargs: Any) -> None:
    if action in _POST:
        tools_changed()


def _on_user_saved(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and not _FLAGS & set(update_fields):
        return  # update_last_login's save, say
    if not kwargs.get("created"):
        tools_changed(instance.pk)


def _on_everyone(sender: Any, **kwargs: Any) -> None:
    tools_changed()


def _on_catalog_forgotten() -> None:
    # The catalog is rebuilt from settings and code: every caller's tools may differ.
    publish(ToolsChanged(ALL_CALLERS))


def connect() -> None:
    """Connect the receivers that publish tool-list changes (``AffordancesConfig.ready``)."""
    uid = "affordances.events"
    user_model = get_user_model()
    post_save.connect(_on_user_saved, sender=user_model, dispatch_uid=f"{uid}.user.save")
    for model in (Group, Permission):
        name = model._meta.label_lower
        post_delete.connect(_on_everyone, sender=model, dispatch_uid=f"{uid}.{name}.delete")
    m2m_changed.connect(
        _on_group_m2m, sender=Group.permissions.through, dispatch_uid=f"{uid}.group.m2m"
    )
    registry.derived(_on_catalog_forgotten)
    if not issubclass(user_model, PermissionsMixin):
        return
    for field_name in ("user_permissions", "groups"):
        through = user_model._meta.get_field(field_name).remote_field.through  # type: ignore[union-attr]
        m2m_changed.connect(_on_user_m2m, sender=through, dispatch_uid=f"{uid}.{field_name}.m2m")
