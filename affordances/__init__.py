"""django-affordances: stable verbs, dynamic affordances for django-fsm models."""

from __future__ import annotations

from affordances.declarations import condition, creates, guard, operation

__all__ = ["condition", "creates", "guard", "operation"]
