"""The tutorial's help desk (docs/tutorial.md, step 2) — ``Ticket`` verbatim — and
``Case``, a model with 12 transitions for the per-row cost (issue 41, profile item 2).

Every face of the benchmark reads these same rows: this library (``@operation``), plain
DRF and django-rest-framework-mcp (``views_plain``), django-mcp-server (``mcp``).
"""

from django.conf import settings
from django.db import models
from django_fsm import FSMField, transition

from affordances import condition, guard, operation
from bench.peers.helpdesk.inputs import ResolveInput


@condition("no_assignee")  # the machine reason reported when it fails
def has_assignee(ticket):
    return ticket.assignee_id is not None


@guard("not_assignee")  # an (instance, user) rule
def assignee_or_lead(ticket, user):
    return ticket.assignee_id == user.pk or user.has_perm("helpdesk.resolve_any_ticket")


def resolution_choices(ticket, user):
    # Narrows the input per ticket: an urgent ticket can only be fixed.
    if ticket.priority == "urgent":
        return {"properties": {"resolution": {"enum": ["fixed"]}}}
    return {}


class Ticket(models.Model):  # noqa: DJ008 (the tutorial's, verbatim)
    title = models.CharField(max_length=200)
    priority = models.CharField(max_length=10, default="normal")  # normal | urgent
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reported"
    )
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned",
    )
    resolution = models.CharField(max_length=20, blank=True, default="")
    status = FSMField(default="open", protected=True)
    version = models.PositiveIntegerField(default=1)  # bumped by every transition

    class Meta:
        permissions = [
            ("work_ticket", "Can start and resolve tickets"),
            ("resolve_any_ticket", "Can resolve tickets assigned to others"),
            ("close_ticket", "Can close resolved tickets"),
        ]

    @operation(
        title="Start work",
        reasons={"in_progress": "already_started", "resolved": "already_resolved"},
    )
    @transition(
        field=status,
        source="open",
        target="in_progress",
        permission="helpdesk.work_ticket",
        conditions=[has_assignee],
    )
    def start(self):
        """Start work on an open ticket: it moves to in progress, and its reporter sees
        that someone is on it. Only a ticket with an assignee can be started."""

    @operation(
        title="Resolve ticket",
        input=ResolveInput,
        reasons={"open": "not_started", "resolved": "already_resolved"},
        guards=[assignee_or_lead],
        constraints=resolution_choices,
    )
    @transition(
        field=status,
        source="in_progress",
        target="resolved",
        permission="helpdesk.work_ticket",
    )
    def resolve(self, *, resolution, note=""):
        """Resolve a ticket in progress as fixed, wont_fix or duplicate, with an
        optional note for the reporter. Only its assignee or a lead may resolve it;
        an urgent ticket can only be resolved as fixed."""
        self.resolution = resolution

    @operation(
        title="Close ticket",
        reasons={"open": "not_resolved", "in_progress": "not_resolved"},
    )
    @transition(
        field=status,
        source="resolved",
        target="closed",
        permission="helpdesk.close_ticket",
    )
    def close(self):
        """Close a resolved ticket for good: it leaves every queue and cannot be
        reopened."""


# A case's life: new → triaged → assigned → in_progress ⇄ waiting, ⇄ escalated,
# → resolved → approved | rejected → closed, resolved/rejected → reopened in progress.
CASE_STATES = [
    "new",
    "triaged",
    "assigned",
    "in_progress",
    "waiting",
    "escalated",
    "resolved",
    "approved",
    "rejected",
    "closed",
]
WORK_CASE = "helpdesk.work_case"


class Case(models.Model):  # noqa: DJ008
    """A support case with 12 transitions, one permission."""

    title = models.CharField(max_length=200)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cases"
    )
    status = FSMField(default="new", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        permissions = [("work_case", "Can work on cases")]

    @operation(title="Triage")
    @transition(field=status, source="new", target="triaged", permission=WORK_CASE)
    def triage(self):
        """Triage a new case: it is checked for completeness and joins the queue
        of cases waiting for an assignee."""

    @operation(title="Assign")
    @transition(field=status, source="triaged", target="assigned", permission=WORK_CASE)
    def assign(self):
        """Assign a triaged case: it gets an owner, who is notified and may start
        work on it."""

    @operation(title="Start")
    @transition(field=status, source="assigned", target="in_progress", permission=WORK_CASE)
    def start(self):
        """Start work on an assigned case: it moves to in progress and its
        reporter sees that someone is on it."""

    @operation(title="Wait for the customer")
    @transition(field=status, source="in_progress", target="waiting", permission=WORK_CASE)
    def wait(self):
        """Wait for information from the customer: the case leaves the active
        queue until the customer answers."""

    @operation(title="Resume")
    @transition(field=status, source="waiting", target="in_progress", permission=WORK_CASE)
    def resume(self):
        """Resume work when the customer answered: the case returns to the
        active queue, in progress."""

    @operation(title="Escalate")
    @transition(
        field=status, source=["in_progress", "waiting"], target="escalated", permission=WORK_CASE
    )
    def escalate(self):
        """Escalate a case to the second line: a specialist takes it over from
        the first line until it is de-escalated."""

    @operation(title="De-escalate")
    @transition(field=status, source="escalated", target="in_progress", permission=WORK_CASE)
    def deescalate(self):
        """Bring an escalated case back to the first line: it returns to
        progress with its original owner."""

    @operation(title="Resolve")
    @transition(field=status, source="in_progress", target="resolved", permission=WORK_CASE)
    def resolve(self):
        """Resolve a case in progress: the fix is proposed to the reporter and
        waits for approval or rejection."""

    @operation(title="Reopen")
    @transition(
        field=status, source=["resolved", "rejected"], target="in_progress", permission=WORK_CASE
    )
    def reopen(self):
        """Reopen a resolved or rejected case: work starts again and the case
        returns to the active queue."""

    @operation(title="Approve")
    @transition(field=status, source="resolved", target="approved", permission=WORK_CASE)
    def approve(self):
        """Approve the resolution of a resolved case: it is accepted and the
        case can then be closed."""

    @operation(title="Reject")
    @transition(field=status, source="resolved", target="rejected", permission=WORK_CASE)
    def reject(self):
        """Reject the resolution of a resolved case: it can be reopened for more
        work, or closed as it is."""

    @operation(title="Close")
    @transition(
        field=status, source=["approved", "rejected"], target="closed", permission=WORK_CASE
    )
    def close(self):
        """Close an approved or rejected case for good: it leaves every queue
        and cannot be reopened."""


CASE_TRANSITIONS = [
    "triage",
    "assign",
    "start",
    "wait",
    "resume",
    "escalate",
    "deescalate",
    "resolve",
    "reopen",
    "approve",
    "reject",
    "close",
]
