"""Every face of the help desk in one URLconf: this library (the tutorial's step 5),
plain DRF, django-rest-framework-mcp and django-mcp-server (their READMEs' wiring)."""

from django.urls import include, path
from djangorestframework_mcp.views import MCPView
from rest_framework.routers import SimpleRouter
from rest_framework_simplejwt.authentication import JWTAuthentication

from affordances.mcp import McpView
from affordances.rest import ResourceRouter
from bench.peers.helpdesk.views import CaseViewSet, TicketViewSet
from bench.peers.helpdesk.views_plain import PlainCaseViewSet, PlainTicketViewSet

router = ResourceRouter()
router.register("tickets", TicketViewSet)
router.register("cases", CaseViewSet)

plain = SimpleRouter()
plain.register("tickets", PlainTicketViewSet, basename="plain-ticket")
plain.register("cases", PlainCaseViewSet, basename="plain-case")


class AuthenticatedMCPView(MCPView):
    """django-rest-framework-mcp's README, "Defining Authentication and Permissions on the
    MCP Endpoint" — with the project's bearer tokens."""

    authentication_classes = [JWTAuthentication]

    def has_mcp_permission(self, request):
        return request.user.is_authenticated


urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", McpView.as_view(), name="mcp"),
    path("plain/", include(plain.urls)),
    path("peers/drf-mcp/", AuthenticatedMCPView.as_view()),
    path("", include("mcp_server.urls")),  # DJANGO_MCP_ENDPOINT: /peers/mcp-server
]
