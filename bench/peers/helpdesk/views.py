# This library's face: the tutorial's helpdesk/views.py, and the same for cases.
from affordances.rest import ResourceViewSet
from bench.peers.helpdesk.models import Case, Ticket


class TicketViewSet(ResourceViewSet):
    model = Ticket  # queryset, serializer, filters and paging: from the registration


class CaseViewSet(ResourceViewSet):
    model = Case
