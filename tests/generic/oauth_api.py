"""The loans' MCP endpoints as OAuth protected resources, with django-oauth-toolkit as
the authorization server under /o/ (affordances.mcp.oauth); for tests/test_mcp_oauth.py.
Loaded as the URLconf after ``generic.Loan`` is registered (``importlib.reload``)."""

from __future__ import annotations

from django.contrib.auth.views import LoginView
from django.urls import include, path

from affordances.mcp import FORMS, McpView, protected_resource_urls
from affordances.mcp.oauth import authorization_server_urls
from affordances.rest import ResourceRouter, ResourceViewSet
from tests.generic.lending import Loan


class LoanViewSet(ResourceViewSet):
    model = Loan


router = ResourceRouter()
router.register("loans", LoanViewSet)

urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
    path("accounts/login/", LoginView.as_view(template_name="admin/login.html")),
    *protected_resource_urls(),
    *authorization_server_urls(),
]

handler404 = "affordances.rest.not_found_view"
