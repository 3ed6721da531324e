"""Crates sent between branches: an input serializer with related fields (a UUID key,
a slug, ``many=True``), ``CurrentUserDefault`` and an object-aware ``validate()``, and a
transition that records who acted (django-fsm-log's ``by=``).

Registered only by tests/test_input_context.py (``tests.generic.transfers_api``).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from rest_framework import serializers

from affordances import creates, operation


class Branch(models.Model):
    """A library branch; a member sees only the branches they staff."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    code = models.SlugField(max_length=12, unique=True)
    staff = models.CharField(max_length=150)
    state = FSMField(default="open", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return self.code

    @operation(title="Close branch")
    @transition(field=state, source="open", target="closed")
    def close(self) -> None:
        """Close the branch: it takes no more crates, and its staff keep their records."""


class Label(models.Model):
    """A label on a crate: not a registered resource, so every label may be named."""

    name = models.CharField(max_length=20, unique=True)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return self.name


#: The branches a crate may travel through, by code: the slug the client sends.
HUBS = ("north", "south")


def through_hubs(crate: Crate, user: Any) -> dict[str, Any]:
    """A constraint on the slug input ``via``: only the hubs, named as the client names
    them (the schema offers codes, not keys)."""
    return {"properties": {"via": {"enum": list(HUBS)}}}


class SendInput(serializers.Serializer):
    branch = serializers.PrimaryKeyRelatedField(queryset=Branch.objects.all())
    via = serializers.SlugRelatedField(
        slug_field="code", queryset=Branch.objects.all(), source="via_branch", required=False
    )
    labels = serializers.PrimaryKeyRelatedField(
        queryset=Label.objects.all(), many=True, required=False
    )
    packer = serializers.HiddenField(default=serializers.CurrentUserDefault())

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        # Object-aware: the crate as it is under its row lock.
        if data["branch"] == self.context["instance"].origin:
            raise serializers.ValidationError({"branch": "The crate is already there."})
        return data


class PackInput(serializers.Serializer):
    origin = serializers.SlugRelatedField(slug_field="code", queryset=Branch.objects.all())
    packer = serializers.HiddenField(default=serializers.CurrentUserDefault())


class Crate(models.Model):
    status = FSMField(default="packed", protected=True)
    origin = models.ForeignKey(Branch, on_delete=models.CASCADE, related_name="+")
    destination = models.ForeignKey(
        Branch, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    via_branch = models.ForeignKey(
        Branch, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    labels = models.ManyToManyField(Label, blank=True)
    # Usernames: the test app has no migrations, so no key to the (migrated) user table.
    packed_by = models.CharField(max_length=150, blank=True, default="")
    sent_by = models.CharField(max_length=150, blank=True, default="")
    received_by = models.CharField(max_length=150, blank=True, default="")
    # A second FSM field: its operations' reasons are keyed by its own states.
    customs = FSMField(default="pending", protected=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        app_label = "generic"

    def __str__(self) -> str:
        return f"Crate {self.pk} ({self.status})"

    @classmethod
    @creates(title="Pack crate", input=PackInput)
    def pack(cls, *, user: Any, origin: Branch, packer: Any) -> Crate:
        """Pack a crate at a branch; the caller is recorded as its packer."""
        return cls.objects.create(origin=origin, packed_by=packer.get_username())

    @operation(title="Send crate", input=SendInput, constraints=through_hubs)
    @transition(field=status, source="packed", target="sent")
    def send(
        self,
        *,
        branch: Branch,
        packer: Any,
        by: Any = None,
        via_branch: Branch | None = None,
        labels: list[Label] | None = None,
    ) -> None:
        """Send a packed crate to another branch, optionally through a third one."""
        self.destination = branch
        self.via_branch = via_branch
        self.sent_by = by.get_username()
        if labels:
            self.labels.set(labels)

    @operation(title="Receive crate")
    @transition(field=status, source="sent", target="received")
    def receive(self, by: Any = None) -> None:
        """Receive a sent crate at its destination; the receiver is recorded by name."""
        self.received_by = by.get_username() if by is not None else ""

    @operation(title="Clear customs", reasons={"cleared": "already_cleared"})
    @transition(field=customs, source="pending", target="cleared")
    def clear(self) -> None:
        """Clear the crate through customs, whatever its shipping status."""
