"""A lending library: loans of books, filtered by django-filter, and a transition that
declares django-fsm's ``on_error=``.

Registered only by tests/test_filter_types.py and tests/test_on_error.py
(``tests.generic.lending_api``): a filter's JSON Schema follows its django-filter type
on MCP and in OpenAPI, and ``on_error=`` is refused by a system check.
"""

from __future__ import annotations

from django.db import models
from django_fsm import FSMField, transition

from affordances import operation


class Book(models.Model):
    title = models.CharField(max_length=100)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return self.title


class Loan(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE)
    due = models.DateField()
    fine = models.DecimalField(max_digits=6, decimal_places=2, default=0)
    renewed = models.BooleanField(default=False)
    kind = models.CharField(
        max_length=10, choices=[("short", "Short"), ("long", "Long")], default="short"
    )
    status = FSMField(default="out", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Loan {self.pk} ({self.status})"

    @operation(title="Return loan")
    @transition(field=status, source="out", target="returned")
    def give_back(self) -> None:
        """Return a loaned book to the library: the loan is closed."""


class Hold(models.Model):
    """A hold whose collection declares ``on_error=``: what the app cannot keep."""

    status = FSMField(default="waiting", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Hold {self.pk} ({self.status})"

    @operation(title="Collect hold")
    @transition(field=status, source="waiting", target="collected", on_error="failed")
    def collect(self) -> None:
        """Collect a waiting hold at the desk: the book leaves with its reader."""
