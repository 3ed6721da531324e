"""The states of a purchase request and the reasons an operation does not start in one."""

from __future__ import annotations

from django.db import models


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    SUBMITTED = "submitted", "Submitted"
    APPROVED = "approved", "Approved"
    ORDERED = "ordered", "Ordered"
    RECEIVED = "received", "Received"
    INVOICED = "invoiced", "Invoiced"
    PAID = "paid", "Paid"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"
    CANCELLED = "cancelled", "Cancelled"


MAIN_PATH = (
    Status.DRAFT,
    Status.SUBMITTED,
    Status.APPROVED,
    Status.ORDERED,
    Status.RECEIVED,
    Status.INVOICED,
    Status.PAID,
)
CLOSED = (Status.REJECTED, Status.WITHDRAWN, Status.CANCELLED)


def state_reasons(*sources: Status, before: str, after: str) -> dict[str, str]:
    """Why an operation starting from ``sources`` does not apply in each other state.

    A state earlier on the main path answers ``before`` (e.g. ``not_received``), a later
    one ``after`` (``already_paid``), a closed one ``request_{state}``.
    """
    first = min(MAIN_PATH.index(s) for s in sources)
    reasons: dict[str, str] = {}
    for index, state in enumerate(MAIN_PATH):
        if state not in sources:
            reasons[state] = before if index < first else after
    for state in CLOSED:
        reasons[state] = f"request_{state.value}"
    return reasons
