"""django-mcp-server's tools, the way its README declares them (``mcp.py``, found by its
app's autodiscovery): a ``ModelQueryToolset`` per model — its one
``query_data_collections`` tool reads them — and an ``MCPToolset`` whose public methods
are the transitions, each as django-fsm's README runs one.
"""

from django.core.exceptions import PermissionDenied
from django_fsm import has_transition_perm
from mcp_server import MCPToolset, ModelQueryToolset

from bench.peers.helpdesk.models import Case, Ticket
from bench.peers.helpdesk.selectors import cases_visible_to, tickets_visible_to

TICKET_FIELDS = ["id", "title", "priority", "status", "resolution", "version"]
CASE_FIELDS = ["id", "title", "status", "version"]


class TicketQueryTool(ModelQueryToolset):
    model = Ticket

    def get_queryset(self):
        """self.request can be used to filter the queryset"""
        return tickets_visible_to(self.request.user)


class CaseQueryTool(ModelQueryToolset):
    model = Case

    def get_queryset(self):
        return cases_visible_to(self.request.user)


def _run(request, queryset, pk, name, fields, **arguments):
    instance = queryset.get(pk=pk)
    method = getattr(instance, name)
    if not has_transition_perm(method, request.user):
        raise PermissionDenied(f"{name} is not available.")
    method(**arguments)
    instance.version += 1
    instance.save()
    return {field: getattr(instance, field) for field in fields}


class TicketTools(MCPToolset):
    def start_ticket(self, ticket_id: int) -> dict:
        """Start work on an open ticket that has an assignee."""
        return _run(
            self.request, tickets_visible_to(self.request.user), ticket_id, "start", TICKET_FIELDS
        )

    def resolve_ticket(self, ticket_id: int, resolution: str, note: str = "") -> dict:
        """Resolve a ticket in progress as fixed, wont_fix or duplicate."""
        return _run(
            self.request,
            tickets_visible_to(self.request.user),
            ticket_id,
            "resolve",
            TICKET_FIELDS,
            resolution=resolution,
            note=note,
        )

    def close_ticket(self, ticket_id: int) -> dict:
        """Close a resolved ticket for good."""
        return _run(
            self.request, tickets_visible_to(self.request.user), ticket_id, "close", TICKET_FIELDS
        )


class CaseTools(MCPToolset):
    def _case(self, case_id, name):
        return _run(self.request, cases_visible_to(self.request.user), case_id, name, CASE_FIELDS)

    def triage_case(self, case_id: int) -> dict:
        """Triage a new case."""
        return self._case(case_id, "triage")

    def assign_case(self, case_id: int) -> dict:
        """Assign a triaged case."""
        return self._case(case_id, "assign")

    def start_case(self, case_id: int) -> dict:
        """Start work on an assigned case."""
        return self._case(case_id, "start")

    def wait_case(self, case_id: int) -> dict:
        """Wait for information from the customer."""
        return self._case(case_id, "wait")

    def resume_case(self, case_id: int) -> dict:
        """Resume work when the customer answered."""
        return self._case(case_id, "resume")

    def escalate_case(self, case_id: int) -> dict:
        """Escalate a case to the second line."""
        return self._case(case_id, "escalate")

    def deescalate_case(self, case_id: int) -> dict:
        """Bring an escalated case back to the first line."""
        return self._case(case_id, "deescalate")

    def resolve_case(self, case_id: int) -> dict:
        """Resolve a case in progress."""
        return self._case(case_id, "resolve")

    def reopen_case(self, case_id: int) -> dict:
        """Reopen a resolved or rejected case."""
        return self._case(case_id, "reopen")

    def approve_case(self, case_id: int) -> dict:
        """Approve a resolution."""
        return self._case(case_id, "approve")

    def reject_case(self, case_id: int) -> dict:
        """Reject a resolution."""
        return self._case(case_id, "reject")

    def close_case(self, case_id: int) -> dict:
        """Close a case for good."""
        return self._case(case_id, "close")
