"""A second FSM model, defined only in tests: the affordances app must serve it unchanged."""

from __future__ import annotations

from django.db import models
from django_fsm import RETURN_VALUE, FSMField, transition
from rest_framework import serializers

from affordances import condition, operation


class EscalateInput(serializers.Serializer):
    level = serializers.IntegerField(min_value=1, max_value=3, help_text="Escalation level.")


@condition("not_assigned")
def is_assigned(ticket: Ticket) -> bool:
    return bool(ticket.assignee)


class Ticket(models.Model):
    state = FSMField(default="open", protected=True)
    assignee = models.CharField(max_length=50, blank=True, default="")
    version = models.PositiveIntegerField(default=1)

    class Meta:
        permissions = [("escalate_ticket", "Can escalate a ticket")]

    def __str__(self) -> str:
        return f"Ticket #{self.pk} ({self.state})"

    @operation(title="Close ticket", reasons={"closed": "already_closed"})
    @transition(
        field=state, source=["open", "escalated"], target="closed", conditions=[is_assigned]
    )
    def close(self) -> None:
        """Close a ticket once its work is done; closed tickets cannot be reopened."""

    @operation(title="Escalate ticket", input=EscalateInput)
    @transition(
        field=state,
        source="open",
        target=RETURN_VALUE("escalated", "closed"),
        permission="generic.escalate_ticket",
    )
    def escalate(self, *, level: int) -> str:
        """Escalate an open ticket to the given level; level 3 closes it for review."""
        return "closed" if level == 3 else "escalated"

    @operation(title="Explode ticket")
    @transition(field=state, source="*", target="open")
    def explode(self) -> None:
        """Reopen a ticket through a body that always fails, to prove rollbacks."""
        self.assignee = "half-applied"
        raise RuntimeError("the body failed after changing the object")
