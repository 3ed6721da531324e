from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from affordances.mcp import COMPACT, FORMS, HYBRID, STATIC, McpView, protected_resource_urls
from affordances.mcp.oauth import authorization_server_urls
from affordances.rest import ResourceRouter, SchemaView
from config.docs import SwaggerView
from config.throttling import (
    ThrottledTokenObtainPairView,
    ThrottledTokenRefreshView,
    throttled_admin_login,
    throttled_api_login,
)
from orders.views import OrderViewSet
from procurement.views import PurchaseRequestViewSet

# One router: the API's entry point, the catalog and both domains' resources, in the
# app's URL namespace ("affordances").
router = ResourceRouter(trailing_slash=True)
router.register("orders", OrderViewSet)
router.register("purchase-requests", PurchaseRequestViewSet)

urlpatterns = [
    # The demo's front door is the API's entry point (links to every face from there).
    path("", RedirectView.as_view(pattern_name="affordances:entry-point", permanent=False)),
    # Rate-limited logins, on the paths of the originals and matched before them.
    path("admin/login/", throttled_admin_login),
    path("api-auth/login/", throttled_api_login),
    path("admin/", admin.site.urls),
    path("api/token/", ThrottledTokenObtainPairView.as_view(), name="token_obtain_pair"),
    path("api/token/refresh/", ThrottledTokenRefreshView.as_view(), name="token_refresh"),
    # The document differs per caller (their operations only): private, never shared.
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/", include(router.urls)),
    path("api-auth/", include("rest_framework.urls")),
    path("mcp", McpView.as_view(profile=HYBRID), name="mcp"),
    path("mcp/static", McpView.as_view(profile=STATIC), name="mcp-static"),
    path("mcp/compact", McpView.as_view(profile=COMPACT), name="mcp-compact"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
    # OAuth 2.1 for the MCP endpoints: RFC 9728 metadata for each (and the origin), and
    # django-oauth-toolkit under /o/ (authorize, token, register, RFC 8414 metadata).
    *protected_resource_urls(),
    *authorization_server_urls(),
]

# Unmatched API URLs (e.g. an id the router cannot parse) answer a problem document.
handler404 = "affordances.rest.not_found_view"
