"""Each run also in Django's admin log (``LogEntry``), so Django's History page shows it.

Written for a run of any face by a signed-in user, in the run's transaction: the admin's
History page is the object's change history, and an order cancelled through REST or MCP
changed as much as one cancelled in the admin. A ``LogEntry`` needs a user, so a run
without one is in the audit trail only (the audit record stays the evidence; this is its
summary in words). An edit saved by the admin's change form is not written again: Django
logs its own. Nothing is written without ``django.contrib.admin`` installed.

The message names the operation and its arguments. Django's History page shows it to
whoever may see the object, so the admin mixin's ``history_view`` says only the change of
state (``redacted``) to a viewer who may not know the operation, as the audit trail does
(``affordances.history``).
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.contenttypes.models import ContentType
from django.db import models

from affordances.models import Interface
from affordances.resources import Resource
from affordances.wording import argument_words, run_title, state_label

__all__ = ["log_run", "message", "redacted"]


def message(title: str, change: str, arguments: list[tuple[str, str]]) -> str:
    """``Cancel order: Pending → Cancelled. Reason: Inventory failure; Note: late.``"""
    said = f"{title}: {change}."
    if arguments:
        said += " " + "; ".join(f"{label}: {value}" for label, value in arguments) + "."
    return said


def redacted(text: str, titles: set[str]) -> str | None:
    """The message without the operation and its arguments, when it is the message of a
    run of one of ``titles``; None when it is not."""
    for title in titles:
        prefix = f"{title}: "
        if text.startswith(prefix):
            return text[len(prefix) :].split(". ", 1)[0].rstrip(".") + "."
    return None


def log_run(
    resource: Resource,
    instance: models.Model,
    *,
    urn: str,
    name: str,
    source: str,
    target: str,
    arguments: dict[str, Any],
    user: Any,
    via: str,
) -> None:
    """One ``LogEntry`` for the run (see the module): in the caller's transaction."""
    if not getattr(user, "is_authenticated", False) or getattr(user, "pk", None) is None:
        return
    if not apps.is_installed("django.contrib.admin"):
        return
    edit = urn == resource.edit_urn
    if edit and via == Interface.ADMIN:
        return  # Django's change form logs its own save
    from django.contrib.admin.models import ADDITION, CHANGE, LogEntry

    change = f"{state_label(resource, source)} → {state_label(resource, target)}"
    LogEntry.objects.create(
        user_id=user.pk,
        content_type=ContentType.objects.get_for_model(resource.model),
        object_id=str(instance.pk),
        object_repr=str(instance)[:200],
        action_flag=ADDITION if source == "" and not edit else CHANGE,
        change_message=message(
            run_title(resource, urn, name),
            change,
            argument_words(resource, urn, name, arguments),
        ),
    )
