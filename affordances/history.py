"""An object's history as one viewer may see it: the audit records, redacted by capability.

The state changes are the object's own history and stay visible to whoever may see the
object; which operation made each change, and with what arguments, only to viewers who
may know that operation (the no-leak rule). Edits outside the catalog (a registration
without ``EDITABLE_FIELDS``) show which fields changed, and their values, to every
viewer. Every face that shows history reads it here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType

from affordances.catalog import get_catalog
from affordances.models import AuditRecord
from affordances.resources import Resource

__all__ = ["HistoryEntry", "history"]


@dataclass(frozen=True)
class HistoryEntry:
    record: AuditRecord
    # None where the viewer may not know the operation that made the change.
    operation: str | None
    arguments: dict[str, Any] | None


def history(resource: Resource, instance: Any, user: Any) -> list[HistoryEntry]:
    """The audit records of ``instance``, newest first, as ``user`` may see them."""
    catalog = get_catalog()
    known = {op.urn for op in catalog.for_user(user)}
    if catalog.edit_for(resource.model) is None:
        # An edit outside the catalog (the admin's alone): every viewer sees what changed.
        # The catalog's edit_{resource} is known as any operation is.
        known.add(resource.edit_urn)
    records = AuditRecord.objects.filter(
        content_type=ContentType.objects.get_for_model(resource.model),
        object_id=str(instance.pk),
    ).order_by("-created_at", "-id")
    return [
        HistoryEntry(record, record.operation_name, dict(record.arguments))
        if record.operation in known
        else HistoryEntry(record, None, None)
        for record in records
    ]
