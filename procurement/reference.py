"""The data purchase requests depend on: cost centers, suppliers and freeze periods.

These are plain models (no state machine); their rows decide which operations apply to
a purchase request, which is why no status enum can tell the whole story.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q


class CostCenter(models.Model):
    """A budget that approved requests consume until they are cancelled."""

    code = models.CharField(max_length=20, unique=True)
    name = models.CharField(max_length=100)
    budget = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0"))]
    )
    # Approved, ordered, received, invoiced and paid requests; changed only under the
    # row lock of ``procurement.budget``.
    committed = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0"))
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="cost_centers"
    )

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code} {self.name}"

    @property
    def remaining(self) -> Decimal:
        return self.budget - self.committed


class Supplier(models.Model):
    name = models.CharField(max_length=100, unique=True)
    blocked = models.BooleanField(default=False, help_text="No new approvals or orders.")
    lead_time_days = models.PositiveSmallIntegerField(default=5)
    express_available = models.BooleanField(default=False)
    recall_notice = models.CharField(
        max_length=200, blank=True, default="", help_text="An open product recall, if any."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FreezePeriod(models.Model):
    """A closing period in which no order may be placed (on one cost center, or all)."""

    starts_on = models.DateField()
    ends_on = models.DateField()
    cost_center = models.ForeignKey(
        CostCenter,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="freezes",
        help_text="Empty: every cost center is frozen.",
    )
    note = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["starts_on"]
        constraints = [
            models.CheckConstraint(
                condition=Q(ends_on__gte=models.F("starts_on")), name="freeze_ends_after_start"
            )
        ]

    def __str__(self) -> str:
        return f"Freeze {self.starts_on} to {self.ends_on}"

    @classmethod
    def covers(cls, cost_center_id: int, day: date) -> bool:
        return (
            cls.objects.filter(starts_on__lte=day, ends_on__gte=day)
            .filter(Q(cost_center__isnull=True) | Q(cost_center_id=cost_center_id))
            .exists()
        )
