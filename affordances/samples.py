"""A sample object of a model, for what must run a project's code without a real one.

The system check evaluates each operation's constraints function on an object (see
``affordances.E007``): a fresh ``Model()`` holds ``None`` in every field without a
default, so a function that reads one (``instance.amount * 2``) would raise. The check
uses :func:`sample_instance` instead: the model's own sample when it declares one — a
classmethod ``affordances_sample()`` returning an unsaved instance — else a fresh
instance whose required fields hold a value of their type (the first choice, 1, "sample",
today, a sample of a required related object…). Nothing is saved.
"""

from __future__ import annotations

import uuid
from datetime import time, timedelta
from decimal import Decimal
from typing import Any

from django.db import models
from django.utils import timezone

__all__ = ["SAMPLE_METHOD", "declared_sample", "sample_instance"]

# The model classmethod a project may declare: an unsaved instance its constraints can read.
SAMPLE_METHOD = "affordances_sample"
_DEPTH = 3  # required related objects sampled this deep (a chain of required keys)


def declared_sample(model: type[models.Model]) -> bool:
    """Whether ``model`` declares its own sample (``affordances_sample()``)."""
    return callable(getattr(model, SAMPLE_METHOD, None))


def sample_instance(model: type[models.Model], *, depth: int = 0) -> models.Model:
    """An unsaved instance of ``model`` to evaluate a project's functions on: the model's
    ``affordances_sample()`` when it has one, else a fresh one whose required fields (not
    null, no default) hold a sample value of their type."""
    declared = getattr(model, SAMPLE_METHOD, None)
    if callable(declared):
        sample = declared()
        if not isinstance(sample, model):
            raise TypeError(f"{model.__name__}.{SAMPLE_METHOD}() returned {sample!r}")
        return sample
    instance = model()
    for field in model._meta.concrete_fields:
        if field.null or field.has_default() or field.primary_key:
            continue
        if field.is_relation:
            related = field.related_model
            if depth < _DEPTH and isinstance(related, type) and related is not model:
                setattr(instance, field.name, sample_instance(related, depth=depth + 1))
            continue
        value = _value(field)
        if value is not None:
            setattr(instance, field.attname, value)
    return instance


def _value(field: models.Field[Any, Any]) -> Any:
    if field.choices:
        first = next(iter(field.flatchoices), None)
        return first[0] if first else None
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, models.DecimalField):
        return Decimal(1)
    if isinstance(field, models.IntegerField | models.FloatField):
        return 1
    if isinstance(field, models.DateTimeField):
        return timezone.now()
    if isinstance(field, models.DateField):
        return timezone.now().date()
    if isinstance(field, models.TimeField):
        return time(0)
    if isinstance(field, models.DurationField):
        return timedelta(0)
    if isinstance(field, models.UUIDField):
        return uuid.uuid4()
    if isinstance(field, models.EmailField):
        return "sample@example.com"
    if isinstance(field, models.URLField):
        return "https://example.com/"
    if isinstance(field, models.CharField | models.TextField):
        length = getattr(field, "max_length", None) or 6
        return "sample"[:length]
    if isinstance(field, models.JSONField):
        return {}
    return None
