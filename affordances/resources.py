"""The models registered in ``AFFORDANCES['MODELS']``, resolved once per catalog build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.module_loading import import_string
from django_fsm import FSMFieldMixin

from affordances.conf import ModelOptions, settings

__all__ = ["Resource", "camel", "registered_resources"]


def camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True, eq=False)
class Resource:
    """A registered model: its name in operation ids, its routes and its scoping."""

    model: type[models.Model]
    options: ModelOptions

    @cached_property
    def name(self) -> str:
        return self.options.resource or self.model._meta.model_name or ""

    @cached_property
    def plural(self) -> str:
        return f"{self.name}s"

    @cached_property
    def basename(self) -> str:
        return self.options.basename or self.model._meta.model_name or ""

    @cached_property
    def id_argument(self) -> str:
        """The argument that binds an operation to one object: ``orderId``."""
        return f"{camel(self.name)}Id"

    @cached_property
    def version_field(self) -> str:
        return self.options.version_field

    @cached_property
    def fsm_fields(self) -> tuple[FSMFieldMixin, ...]:
        return tuple(f for f in self.model._meta.fields if isinstance(f, FSMFieldMixin))

    @cached_property
    def serializer_class(self) -> type | None:
        return import_string(self.options.serializer) if self.options.serializer else None

    @cached_property
    def filterset_class(self) -> type | None:
        return import_string(self.options.filterset) if self.options.filterset else None

    @cached_property
    def _queryset_function(self) -> Callable[[Any], models.QuerySet[Any]] | None:
        return import_string(self.options.queryset) if self.options.queryset else None

    def visible_queryset(self, user: Any) -> models.QuerySet[Any]:
        """Objects this user may see; the default is every object for an authenticated user."""
        if self._queryset_function is not None:
            return self._queryset_function(user)
        if not getattr(user, "is_authenticated", False):
            return self.model._default_manager.none()
        return self.model._default_manager.all()

    @cached_property
    def pk_is_integer(self) -> bool:
        return isinstance(
            self.model._meta.pk, models.AutoField | models.BigAutoField | models.IntegerField
        )


def registered_resources() -> tuple[Resource, ...]:
    resources = []
    for options in settings.models:
        try:
            model = apps.get_model(options.label)
        except (LookupError, ValueError) as exc:
            raise ImproperlyConfigured(
                f"AFFORDANCES['MODELS'] names {options.label!r}, which is not an installed model."
            ) from exc
        resources.append(Resource(model=model, options=options))
    return tuple(resources)
