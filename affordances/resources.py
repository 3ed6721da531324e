"""The models registered in ``AFFORDANCES['MODELS']``, resolved once per catalog build."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import models
from django.utils import translation
from django.utils.module_loading import import_string
from django_fsm import FSMFieldMixin

from affordances.conf import IDENTIFIER, ModelOptions, settings
from affordances.problems import Problem

__all__ = ["Resource", "camel", "registered_resources"]

_MAX_BIGINT = 2**63 - 1


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
    def _queryset_function(self) -> Callable[[Any], models.QuerySet[Any]] | None:
        return import_string(self.options.queryset) if self.options.queryset else None

    def scoped(self, user: Any) -> models.QuerySet[Any]:
        """The registered ``QUERYSET`` for this user, unordered; read it through
        :func:`affordances.reads.visible`, which every face uses."""
        if self._queryset_function is not None:
            return self._queryset_function(user)
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
        """A primary key from a URL or JSON (or in its Python type), or ``not_found`` —
        never a database error, whatever the key field.

        Only the canonical spelling of an integer id names an object (``"1"`` from a
        URL, ``1`` from JSON; not ``" 1"``, ``1.0`` or ``True``); beyond a bigint the
        database would raise instead of finding nothing. Other keys are read by the key
        field's own ``to_python`` (a ``UUIDField`` takes a ``uuid.UUID`` or its
        hyphenated text, in either case); text with control characters (a NUL cannot
        reach PostgreSQL) or longer than the field is no key.
        """
        if self.pk_is_integer:
            return _integer_key(value)
        field = self.model._meta.pk
        assert field is not None
        if isinstance(value, bool) or value is None or value == "":
            raise Problem.not_found()
        if isinstance(value, str) and (_CONTROL.search(value) or len(value) > _MAX_KEY_TEXT):
            raise Problem.not_found()
        try:
            key = field.to_python(value)
        except (ValidationError, TypeError, ValueError, OverflowError):
            raise Problem.not_found() from None
        if isinstance(field, models.UUIDField):
            # One spelling per object: the hyphenated form (not braces, URNs or bare hex).
            if isinstance(value, str) and str(key) != value.lower():
                raise Problem.not_found()
            return key
        if isinstance(key, str):
            limit = getattr(field, "max_length", None)
            if key == "" or (limit is not None and len(key) > limit):
                raise Problem.not_found()
        return key

    @cached_property
    def pk_is_integer(self) -> bool:
        return isinstance(
            self.model._meta.pk, models.AutoField | models.BigAutoField | models.IntegerField
        )

    @cached_property
    def id_schema(self) -> dict[str, Any]:
        """The JSON Schema of the id argument, from the key field."""
        field = self.model._meta.pk
        if self.pk_is_integer:
            # Ids beyond a bigint are refused as not_found when parsed.
            return {"type": "integer", "minimum": 1}
        if isinstance(field, models.UUIDField):
            return {"type": "string", "format": "uuid"}
        schema: dict[str, Any] = {"type": "string", "minLength": 1}
        limit = getattr(field, "max_length", None)
        if limit is not None:
            schema["maxLength"] = limit
        return schema


# What no key holds: C0 controls and DEL (PostgreSQL refuses a NUL in text).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Longer text is no key of any field a database indexes; not worth parsing.
_MAX_KEY_TEXT = 1024


def _integer_key(value: Any) -> int:
    if isinstance(value, bool):
        raise Problem.not_found()
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON Schema's integer: 1.0 is 1
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
        if str(number) != value:
            raise Problem.not_found()
    else:
        raise Problem.not_found()
    if not 1 <= number <= _MAX_BIGINT:
        raise Problem.not_found()
    return number


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
