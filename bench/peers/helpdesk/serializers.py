# This library's face: the tutorial's helpdesk/serializers.py, and the same for cases.
from rest_framework import serializers

from affordances.rest import AffordancesMixin, ResourceUrlField
from bench.peers.helpdesk.models import Case, Ticket


class TicketSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()  # the ticket's own URL (HAL self link, MCP resource URI)

    class Meta:
        model = Ticket
        fields = ["id", "url", "title", "priority", "status", "resolution", "version"]
        read_only_fields = fields


class CaseSerializer(AffordancesMixin, serializers.ModelSerializer):
    url = ResourceUrlField()

    class Meta:
        model = Case
        fields = ["id", "url", "title", "status", "version"]
        read_only_fields = fields
