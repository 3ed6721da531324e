"""The admin face: ``AffordanceAdminMixin`` for a registered model's ``ModelAdmin``.

Importing this package (Django's admin autodiscovery does) also registers the read-only
audit log and, for superusers, the links of foreign OAuth identities to local users.
"""

from __future__ import annotations

from affordances.admin.audit import AuditRecordAdmin
from affordances.admin.identities import OAuthIdentityAdmin
from affordances.admin.mixins import ANY_STATE, AffordanceAdminMixin
from affordances.admin.refusals import MalformedRequestRefusalMixin

__all__ = [
    "ANY_STATE",
    "AffordanceAdminMixin",
    "AuditRecordAdmin",
    "MalformedRequestRefusalMixin",
    "OAuthIdentityAdmin",
]
