"""A booking: date and date-time inputs bounded per object by a constraint, for
tests/test_date_constraints.py (issue 52, item 5).

``reschedule`` takes a ``day`` (a date) and an optional ``at`` (a date-time); its
constraint bounds both by the booking's own window (``opens``..``closes``) — the
``formatMinimum``/``formatMaximum`` of the constraint vocabulary — and reads the
booking's ``fee`` (not null, no default), so a fresh ``Booking()`` cannot evaluate it: the
system check's probe needs a sample. Registered only by that test
(``tests.generic.bookings_api``).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from rest_framework import serializers

from affordances import operation


class RescheduleInput(serializers.Serializer):
    day = serializers.DateField(help_text="The new day.")
    at = serializers.DateTimeField(required=False, help_text="The new time.")


def booking_window(booking: Booking | None, user: Any) -> dict[str, Any]:
    if booking is None:
        return {}
    if booking.fee * 2 > Decimal(1000):  # reads a field a fresh Booking() leaves None
        return {"required": ["at"]}
    if booking.fee < 0:  # a project's bug: a bound spelled wrongly (not YYYY-MM-DD)
        return {"properties": {"day": {"formatMinimum": "2025-3-1"}}}
    opens, closes = booking.opens or date(2025, 3, 1), booking.closes or date(2025, 3, 31)
    return {
        "properties": {
            "day": {"formatMinimum": opens.isoformat(), "formatMaximum": closes.isoformat()},
            "at": {"formatMinimum": f"{opens.isoformat()}T09:00:00Z"},
        }
    }


class Booking(models.Model):
    state = FSMField(default="booked", protected=True)
    fee = models.DecimalField(max_digits=8, decimal_places=2)
    opens = models.DateField(null=True, blank=True)
    closes = models.DateField(null=True, blank=True)
    day = models.DateField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Booking #{self.pk} ({self.state})"

    @operation(title="Reschedule booking", input=RescheduleInput, constraints=booking_window)
    @transition(field=state, source="booked", target="booked")
    def reschedule(self, *, day: date, at: Any = None) -> None:
        """Move a booking to another day within its window."""
        self.day = day
