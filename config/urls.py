from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework_simplejwt.views import TokenObtainPairView, TokenRefreshView

from affordances.mcp.profiles import FORMS, HYBRID, STATIC
from affordances.mcp.views import McpView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/token/", TokenObtainPairView.as_view(), name="token_obtain_pair"),
    path("api/token/refresh/", TokenRefreshView.as_view(), name="token_refresh"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/", include("affordances.urls")),
    path("api/", include("orders.urls")),
    path("api-auth/", include("rest_framework.urls")),
    path("mcp", McpView.as_view(profile=HYBRID), name="mcp"),
    path("mcp/static", McpView.as_view(profile=STATIC), name="mcp-static"),
    path("mcp/forms", McpView.as_view(profile=FORMS), name="mcp-forms"),
]
