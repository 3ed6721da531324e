"""The loans behind DRF's ``TokenAuthentication`` alone, on REST and MCP; for
tests/test_mcp_challenge.py. Keys are looked up in :data:`KEYS` (no ``authtoken``
table): the header parsing — the scheme, in any case — is DRF's own."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.urls import include, path
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from affordances.mcp import McpView
from affordances.rest import ResourceRouter, ResourceViewSet
from tests.generic.lending import Loan

# key -> username
KEYS = {"k-3f9a1c": "root"}


class KeyAuthentication(TokenAuthentication):
    """DRF's ``Authorization: Token <key>``, keys from :data:`KEYS`."""

    def authenticate_credentials(self, key: str) -> tuple[Any, str]:
        username = KEYS.get(key)
        user = get_user_model().objects.filter(username=username).first() if username else None
        if user is None:
            raise AuthenticationFailed("Invalid token.")
        return user, key


class LoanViewSet(ResourceViewSet):
    model = Loan
    authentication_classes = [KeyAuthentication]


router = ResourceRouter()
router.register("loans", LoanViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
]

handler404 = "affordances.rest.not_found_view"

SETTINGS = {"MCP_AUTHENTICATION_CLASSES": ["tests.generic.token_api.KeyAuthentication"]}
