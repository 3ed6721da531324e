"""Plain DRF — a ``ModelViewSet`` per model with one ``@action`` per transition, as
django-fsm's README runs one (``has_transition_perm``, then the transition, then
``save()``) — exposed as MCP tools by django-rest-framework-mcp the way its README shows:
``@mcp_viewset()`` on the viewset, ``@mcp_tool(input_serializer=…)`` on each action.

DRF's own renderers, parsers and negotiation (what a project without this library has),
the project's authentication (a simplejwt bearer token) and ``IsAuthenticated``.
"""

from django_fsm import has_transition_perm
from djangorestframework_mcp.decorators import mcp_tool, mcp_viewset
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response

from bench.peers.helpdesk.inputs import ResolveInput
from bench.peers.helpdesk.models import Case, Ticket
from bench.peers.helpdesk.selectors import cases_visible_to, tickets_visible_to


class PlainTicketSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="plain-ticket-detail")

    class Meta:
        model = Ticket
        fields = ["id", "url", "title", "priority", "status", "resolution", "version"]
        read_only_fields = ["status", "resolution", "version"]


class PlainCaseSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(view_name="plain-case-detail")

    class Meta:
        model = Case
        fields = ["id", "url", "title", "status", "version"]
        read_only_fields = ["status", "version"]


class PlainPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000


class _PlainViewSet(viewsets.ModelViewSet):
    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]
    parser_classes = [JSONParser, FormParser, MultiPartParser]
    content_negotiation_class = DefaultContentNegotiation
    pagination_class = PlainPagination

    def _transition(self, request, name, **arguments):
        instance = self.get_object()
        method = getattr(instance, name)
        if not has_transition_perm(method, request.user):
            raise PermissionDenied(f"{name} is not available.")
        method(**arguments)
        instance.version += 1
        instance.save()
        return Response(self.get_serializer(instance).data)


@mcp_viewset()
class PlainTicketViewSet(_PlainViewSet):
    queryset = Ticket.objects.order_by("pk")
    serializer_class = PlainTicketSerializer

    def get_queryset(self):
        return tickets_visible_to(self.request.user).order_by("pk")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        return self._transition(request, "start")

    @mcp_tool(input_serializer=ResolveInput)
    @action(detail=True, methods=["post"])
    def resolve(self, request, pk=None):
        data = ResolveInput(data=request.data)
        if not data.is_valid():
            raise ValidationError(data.errors)
        return self._transition(request, "resolve", **data.validated_data)

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def close(self, request, pk=None):
        return self._transition(request, "close")


@mcp_viewset()
class PlainCaseViewSet(_PlainViewSet):
    queryset = Case.objects.order_by("pk")
    serializer_class = PlainCaseSerializer

    def get_queryset(self):
        return cases_visible_to(self.request.user).order_by("pk")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def triage(self, request, pk=None):
        return self._transition(request, "triage")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def assign(self, request, pk=None):
        return self._transition(request, "assign")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        return self._transition(request, "start")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def wait(self, request, pk=None):
        return self._transition(request, "wait")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return self._transition(request, "resume")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def escalate(self, request, pk=None):
        return self._transition(request, "escalate")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def deescalate(self, request, pk=None):
        return self._transition(request, "deescalate")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def resolve(self, request, pk=None):
        return self._transition(request, "resolve")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def reopen(self, request, pk=None):
        return self._transition(request, "reopen")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def approve(self, request, pk=None):
        return self._transition(request, "approve")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def reject(self, request, pk=None):
        return self._transition(request, "reject")

    @mcp_tool(input_serializer=None)
    @action(detail=True, methods=["post"])
    def close(self, request, pk=None):
        return self._transition(request, "close")
