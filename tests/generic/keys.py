"""Models keyed otherwise than by an integer: a UUID and a short text key.

Registered only by tests/test_key_types.py (``tests.generic.keys_api``): every face must
parse the key by its own field, and answer a malformed one as a missing object.
"""

from __future__ import annotations

import uuid

from django.db import models
from django_fsm import FSMField, transition

from affordances import operation


class Voucher(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Not named "state" or "status": the field's name is the model's business.
    phase = FSMField(default="issued", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Voucher {self.pk} ({self.phase})"

    @operation(title="Redeem voucher")
    @transition(field=phase, source="issued", target="redeemed")
    def redeem(self) -> None:
        """Redeem an issued voucher: it is used up, and can be redeemed no more."""


class Locker(models.Model):
    code = models.CharField(primary_key=True, max_length=12)
    phase = FSMField(default="free", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Locker {self.pk} ({self.phase})"

    @operation(title="Occupy locker")
    @transition(field=phase, source="free", target="occupied")
    def occupy(self) -> None:
        """Occupy a free locker: it holds a parcel until it is emptied again."""
