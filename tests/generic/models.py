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


@condition("over_limit")
def within_limit(expense: Expense) -> bool:
    return expense.amount <= Expense.LIMIT


class Expense(models.Model):
    """Who may act on an expense is decided per expense — by its owner and its reviewer —
    by an object-permission backend (tests/test_object_permissions.py wires django-rules)."""

    LIMIT = 1000

    state = FSMField(default="draft", protected=True)
    # Usernames, not foreign keys: this app has no migrations, and its tables are made
    # before auth's (PostgreSQL refuses a foreign key to a table not made yet).
    owner = models.CharField(max_length=150)
    reviewer = models.CharField(max_length=150, blank=True, default="")
    amount = models.PositiveIntegerField(default=10)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        permissions = [
            ("submit_expense", "Can submit and withdraw expenses"),
            ("review_expense", "Can approve and reopen expenses"),
        ]

    def __str__(self) -> str:
        return f"Expense #{self.pk} ({self.state})"

    @operation(title="Submit expense", reasons={"submitted": "already_submitted"})
    @transition(
        field=state, source="draft", target="submitted", permission="generic.submit_expense"
    )
    def submit(self) -> None:
        """Submit a draft expense for review."""

    @operation(title="Approve expense", reasons={"draft": "not_submitted"})
    @transition(
        field=state,
        source="submitted",
        target="approved",
        permission="generic.review_expense",
        conditions=[within_limit],
    )
    def approve(self) -> None:
        """Approve a submitted expense within the limit."""

    # One method, two django-fsm transitions: different sources, different permissions.
    @operation(title="Reopen expense")
    @transition(field=state, source="approved", target="draft", permission="generic.review_expense")
    @transition(
        field=state, source="submitted", target="draft", permission="generic.submit_expense"
    )
    def reopen(self) -> None:
        """Put an expense back to draft: its owner withdraws a submitted one, its reviewer
        reopens an approved one."""


# Defined in a module of its own, for tests/test_constraint_vocabulary.py.
from tests.generic.bookings import Booking  # noqa: E402, F401
from tests.generic.claims import Claim, Policy  # noqa: E402, F401
from tests.generic.inheritance import Asset, Vehicle  # noqa: E402, F401
from tests.generic.keys import Locker, Voucher  # noqa: E402, F401
from tests.generic.lending import Book, Hold, Loan  # noqa: E402, F401
from tests.generic.parcels import Parcel  # noqa: E402, F401
from tests.generic.payouts import Payout  # noqa: E402, F401
from tests.generic.shelves import Shelf, Tote, Volume  # noqa: E402, F401
from tests.generic.shop import Purchase  # noqa: E402, F401
from tests.generic.transfers import Branch, Crate, Label  # noqa: E402, F401
