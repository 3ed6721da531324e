"""Payouts: a role's prerequisite beside an object's rule, for
tests/test_role_prerequisites.py (issue 52, item 4).

``pay`` needs the role ``generic.work_payout_desk`` (a plain model-level permission,
``@operation(requires=...)``) and, per payout, ``generic.pay_payout`` — which an object
backend grants per object (django-rules: the payout's assignee; django-guardian: a
per-object grant). ``hold`` has the same object rule and no prerequisite: with an
object backend every user may hold some payout, so it is in everyone's catalog.
"""

from __future__ import annotations

from django.db import models
from django_fsm import FSMField, transition

from affordances import operation


class Payout(models.Model):
    assignee = models.CharField(max_length=30, blank=True)
    state = FSMField(default="due", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"
        permissions = [
            ("work_payout_desk", "Works the payout desk"),
            ("pay_payout", "Pays the payout"),
        ]

    def __str__(self) -> str:
        return f"Payout {self.pk} ({self.state})"

    @operation(title="Pay payout", requires="generic.work_payout_desk")
    @transition(field=state, source="due", target="paid", permission="generic.pay_payout")
    def pay(self) -> None:
        """Pay a due payout to its payee: the money leaves the account."""

    @operation(title="Hold payout")
    @transition(field=state, source="due", target="held", permission="generic.pay_payout")
    def hold(self) -> None:
        """Hold a due payout until someone looks at it again: nothing is paid meanwhile."""
