"""Insurance claims under policies, as the adopter of issue 50 has them: some claims and
policies are sealed, and the registration's ``QUERYSET`` — a function of the user and
the request — hides them (``tests.generic.claims_api``).

Registered only by tests/test_one_visibility.py.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from rest_framework import serializers

from affordances import operation


class Policy(models.Model):
    number = models.CharField(max_length=20)
    sealed = models.BooleanField(default=False)
    state = FSMField(default="active", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"
        verbose_name_plural = "policies"

    def __str__(self) -> str:
        return f"Policy {self.number}"

    @operation(title="Lapse policy")
    @transition(field=state, source="active", target="lapsed")
    def lapse(self) -> None:
        """Let an active policy lapse: no claim is paid under it any more."""


class TransferInput(serializers.Serializer):
    policy = serializers.PrimaryKeyRelatedField(queryset=Policy.objects.all())


class Claim(models.Model):
    sealed = models.BooleanField(default=False)
    policy = models.ForeignKey(
        Policy, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    state = FSMField(default="open", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Claim {self.pk} ({self.state})"

    @operation(title="Reject claim")
    @transition(field=state, source="open", target="rejected")
    def reject(self) -> None:
        """Reject an open claim: nothing will be paid on it."""

    @operation(title="Transfer claim", input=TransferInput)
    @transition(field=state, source="open", target="transferred")
    def transfer(self, *, policy: Any) -> None:
        """Move an open claim to the policy it was really filed under."""
        self.policy = policy
