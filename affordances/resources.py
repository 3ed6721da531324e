"""The models registered in ``AFFORDANCES['MODELS']``, resolved once per catalog build."""

from __future__ import annotations

import inspect
import pkgutil
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from importlib import import_module
from typing import Any

from django.apps import apps
from django.db import models
from django.utils import translation
from django_fsm import FSMFieldMixin
from rest_framework.serializers import BaseSerializer

from affordances.conf import (
    ANY_STATE,
    IDENTIFIER,
    ModelOptions,
    SettingError,
    close_match,
    did_you_mean,
    settings,
)
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
        found: type | None = self._option("SERIALIZER", self.options.serializer)
        return found

    @cached_property
    def filterset_class(self) -> type | None:
        found: type | None = self._option("FILTERSET", self.options.filterset)
        return found

    @cached_property
    def _queryset_function(self) -> Callable[..., models.QuerySet[Any]] | None:
        found: Callable[..., models.QuerySet[Any]] | None = self._option(
            "QUERYSET", self.options.queryset
        )
        return found

    def _option(self, key: str, path: Any) -> Any:
        """What a dotted-path option names, or None when it is not set; a path that names
        nothing, or not the kind of thing the option takes, is a :class:`SettingError`
        (``affordances.E046``: the system check reads these same properties)."""
        if path is None:
            return None
        kind, fits = _OPTION_KINDS[key]
        where = f"AFFORDANCES['MODELS'][{self.options.label!r}][{key!r}]"
        suggestion = None
        if not isinstance(path, str):
            problem = f"is {path!r}, not a dotted path"
        else:
            try:
                found = _resolve(path)
            except _Unresolved as exc:
                problem, suggestion = f"is {path!r}: {exc.problem}", exc.suggestion
            else:
                if fits(found):
                    return found
                problem = f"is {path!r}, which is not {kind}"
        raise SettingError(
            f"{where} {problem}.",
            hint=f"{f'Did you mean {suggestion!r}? ' if suggestion else ''}"
            f"{key} is the dotted path of {kind}.",
            check_id="affordances.E046",
            obj=self.model,
        )

    def setting_errors(self) -> list[SettingError]:
        """What is wrong with the registration's dotted paths (the system check's E046),
        read as every face reads them."""
        errors: list[SettingError] = []
        for key in _OPTION_KINDS:
            try:
                self._option(key, getattr(self.options, key.lower()))
            except SettingError as exc:
                errors.append(exc)
        return errors

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
        """Spelled as operation URNs are: the edit is an operation outside the catalog
        unless the registration declares ``EDITABLE_FIELDS`` (then the catalog's
        ``edit_{resource}`` has this URN)."""
        slug = self.edit_name.replace("_", "-")
        return f"urn:{settings.NAMESPACE}:operation:{slug}:v1"

    @cached_property
    def editable_fields(self) -> dict[str, tuple[str, ...]]:
        """The registration's ``EDITABLE_FIELDS`` by state (``"*"``: every state); empty
        when the model takes no edits through the catalog."""
        return dict(self.options.editable_fields)

    @cached_property
    def edit_requires(self) -> tuple[str, ...]:
        """The edit's role prerequisites (``EDIT_REQUIRES``): what ``requires=`` is to a
        transition."""
        return self.options.edit_requires

    @cached_property
    def edit_fields(self) -> tuple[str, ...]:
        """Every field some state lets callers edit, in the order declared."""
        names = (name for fields in self.editable_fields.values() for name in fields)
        return tuple(dict.fromkeys(names))

    def editable_in(self, instance: Any) -> frozenset[str]:
        """The declared fields editable on ``instance`` as it is: those of every state
        and those of its (first) FSM field's state."""
        declared = self.editable_fields
        fields = set(declared.get(ANY_STATE, ()))
        if declared.keys() - {ANY_STATE} and self.fsm_fields:
            # Read only where some state has fields of its own (a list declares none).
            fields.update(declared.get(str(self.fsm_fields[0].get_state(instance)), ()))
        return frozenset(fields)

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
            labels = [installed._meta.label for installed in apps.get_models()]
            raise SettingError(
                f"AFFORDANCES['MODELS'] names {options.label!r}, which is not an installed model.",
                hint=f"{did_you_mean([options.label], labels)}Name it "
                "'app_label.ModelName', its app in INSTALLED_APPS.",
                check_id="affordances.E001",
                obj=f"AFFORDANCES['MODELS'][{options.label!r}]",
            ) from exc
        resources.append(Resource(model=model, options=options))
    return tuple(resources)


def _is_serializer(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseSerializer)


def _is_filterset(value: Any) -> bool:
    # django-filter is an optional dependency: its FilterSet classes carry base_filters.
    return isinstance(value, type) and hasattr(value, "base_filters")


# Each dotted-path option of a registration: what it must name, and the test of that.
_OPTION_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "SERIALIZER": ("a DRF serializer class", _is_serializer),
    "QUERYSET": ("a function (user) or (user, request) -> QuerySet", callable),
    "FILTERSET": ("a django-filter FilterSet class", _is_filterset),
}


class _Unresolved(Exception):
    def __init__(self, problem: str, suggestion: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.suggestion = suggestion


def _resolve(path: str) -> Any:
    """What ``path`` names (``import_string``'s rule); :class:`_Unresolved` says which part
    names nothing, and the closest existing spelling of that part."""
    module_path, _, name = path.rpartition(".")
    if not module_path or not name:
        raise _Unresolved("not a dotted path ('package.module.name')")
    try:
        module = import_module(module_path)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing != module_path and not module_path.startswith(f"{missing}."):
            # The module exists, and something it imports does not.
            raise _Unresolved(f"importing {module_path!r} raised {_raised(exc)}") from None
        parent, _, last = missing.rpartition(".")
        match = close_match(last, _submodules(parent))
        suggestion = f"{parent}.{match}".lstrip(".") + path[len(missing) :] if match else None
        raise _Unresolved(f"there is no module {missing!r}", suggestion) from None
    except Exception as exc:
        raise _Unresolved(f"importing {module_path!r} raised {_raised(exc)}") from None
    if not hasattr(module, name):
        match = close_match(name, [n for n in dir(module) if not n.startswith("_")])
        raise _Unresolved(
            f"the module {module_path!r} has no {name!r}",
            f"{module_path}.{match}" if match else None,
        )
    return getattr(module, name)


def _submodules(package: str) -> list[str]:
    """The modules of ``package`` (the top-level ones for ""), to spell a missing one."""
    try:
        paths = import_module(package).__path__ if package else None
    except (ImportError, AttributeError):
        return []
    return [module.name for module in pkgutil.iter_modules(paths)]


def _raised(exc: BaseException) -> str:
    """An exception as one line: its type, its message and where it was raised."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename[:1] != "<"]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
