"""The links from another authorization server's identities to local users.

Resource-server mode maps a foreign token to a local user only through an
:class:`~affordances.models.OAuthIdentity` row (``affordances.mcp.identities``): an
operator links an (issuer, subject) to an account here, on purpose. Only superusers
may: a link is a way into that account.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from affordances.admin.refusals import MalformedRequestRefusalMixin
from affordances.models import OAuthIdentity


@admin.register(OAuthIdentity)
class OAuthIdentityAdmin(MalformedRequestRefusalMixin, admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ["subject", "issuer", "user", "created_at"]
    search_fields = ["subject", "issuer"]
    raw_id_fields = ["user"]

    def _superuser(self, request: HttpRequest) -> bool:
        return bool(getattr(request.user, "is_superuser", False))

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return self._superuser(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return self._superuser(request)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return self._superuser(request)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._superuser(request)
