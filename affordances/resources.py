"""The models registered in ``AFFORDANCES['MODELS']``, resolved once per catalog build."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils import translation
from django.utils.module_loading import import_string
from django_fsm import FSMFieldMixin

from affordances.conf import IDENTIFIER, ModelOptions, settings
from affordances.vocabulary import is_integer_key, key_schema, parse_key

__all__ = ["Resource", "camel", "registered_resources"]


def _untranslated(text: Any) -> str:
    """A model's verbose name as written in code: the catalog is the same in every
    language (a lazy translation would follow the request's)."""
    with translation.override(None):
        return str(text)


def _identifier(text: str) -> str:
    return "_".join(text.lower().split())


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
        """The plural identifier of ``list_{plural}``: the registration's ``PLURAL``; else
        the model's ``verbose_name_plural`` as an identifier when its ``verbose_name``
        spells the resource name (``Company`` → ``companies``); else the name and "s"."""
        if self.options.plural:
            return self.options.plural
        singular = _identifier(_untranslated(self.model._meta.verbose_name))
        plural = _identifier(_untranslated(self.model._meta.verbose_name_plural))
        if singular == self.name and plural and IDENTIFIER.fullmatch(plural):
            return plural
        return f"{self.name}s"

    @cached_property
    def verbose_name(self) -> str:
        """The noun of generated prose: "purchase request" (never "purchase_request")."""
        return self.options.verbose_name or _untranslated(self.model._meta.verbose_name)

    @cached_property
    def verbose_name_plural(self) -> str:
        return self.options.verbose_name_plural or _untranslated(
            self.model._meta.verbose_name_plural
        )

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
    def _queryset_function(self) -> Callable[..., models.QuerySet[Any]] | None:
        return import_string(self.options.queryset) if self.options.queryset else None

    @cached_property
    def _queryset_takes_request(self) -> bool:
        """Whether ``QUERYSET`` is ``(user, request)`` rather than ``(user)``: read from its
        signature once (a callable whose signature cannot be read is given the user only)."""
        function = self._queryset_function
        if function is None:
            return False
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            return False
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters) or (
            sum(p.kind in positional for p in parameters) >= 2
        )

    def scoped(self, user: Any, request: Any = None) -> models.QuerySet[Any]:
        """The registered ``QUERYSET`` for this user (and the face's request, to a function
        that takes one: None where there is none, e.g. ``perform()`` from code), unordered.
        The one place a project narrows what a caller may see; read it through
        :func:`affordances.reads.visible`, which every face uses."""
        function = self._queryset_function
        if function is not None:
            return function(user, request) if self._queryset_takes_request else function(user)
        if not getattr(user, "is_authenticated", False):
            return self.model._default_manager.none()
        return self.model._default_manager.all()

    @cached_property
    def edit_name(self) -> str:
        """The audit name of an edit outside the catalog (e.g. the admin's change form)."""
        return f"edit_{self.name}"

    @cached_property
    def edit_urn(self) -> str:
        """Spelled as operation URNs are: the edit is an operation outside the catalog."""
        slug = self.edit_name.replace("_", "-")
        return f"urn:{settings.NAMESPACE}:operation:{slug}:v1"

    @cached_property
    def ordering(self) -> tuple[str, ...]:
        return self.options.ordering

    @property
    def page_size(self) -> int:
        return self.options.page_size or int(settings.PAGE_SIZE)

    @property
    def max_page_size(self) -> int:
        return self.options.max_page_size or int(settings.MAX_PAGE_SIZE)

    def parse_pk(self, value: Any) -> Any:
        """A key of this model from a URL or JSON, or ``not_found``
        (:func:`affordances.vocabulary.parse_key`)."""
        return parse_key(self.model, value)

    @cached_property
    def pk_is_integer(self) -> bool:
        return is_integer_key(self.model)

    @cached_property
    def id_schema(self) -> dict[str, Any]:
        """The JSON Schema of the id argument (:func:`affordances.vocabulary.key_schema`)."""
        return key_schema(self.model)


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
