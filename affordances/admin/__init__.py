"""The admin face: ``AffordanceAdminMixin`` for a registered model's ``ModelAdmin``.

Importing this package (Django's admin autodiscovery does) also registers the read-only
audit log.
"""

from __future__ import annotations

from affordances.admin.audit import AuditRecordAdmin
from affordances.admin.mixins import ANY_STATE, AffordanceAdminMixin
from affordances.admin.refusals import MalformedRequestRefusalMixin

__all__ = ["ANY_STATE", "AffordanceAdminMixin", "AuditRecordAdmin", "MalformedRequestRefusalMixin"]
