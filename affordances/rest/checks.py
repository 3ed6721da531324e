"""System checks of the REST face: what would silently break its links and documents."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.urls import Resolver404, URLResolver, get_resolver, resolve
from rest_framework.pagination import CursorPagination
from rest_framework.settings import api_settings

from affordances import routes
from affordances.catalog import get_catalog
from affordances.rest import paging
from affordances.rest.renderers import HalFormsRenderer, HalRenderer
from affordances.rest.viewsets import ResourceMixin
from affordances.visibility import refused_narrowing

__all__ = ["check_rest_face"]


@checks.register(checks.Tags.urls)
def check_rest_face(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    try:
        catalog = get_catalog()
    except Exception:  # the core's checks report a catalog that cannot be built
        return []
    messages = [
        *_check_routes(catalog),
        *_check_renderers(),
        *_check_schema_class(),
        *_check_lists(catalog),
        *_check_narrowing(),
        *_check_urls(catalog),
    ]
    return messages


def _check_routes(catalog: Any) -> list[checks.CheckMessage]:
    """W004: a registered model whose routes do not reverse (targets would be null);
    W008: models registered, but the catalog's endpoints are not in the URLconf."""
    messages: list[checks.CheckMessage] = []
    if catalog.resources and routes.path_or_none(routes.ENTRY_POINT) is None:
        messages.append(
            checks.Warning(
                f"No URL named {routes.ENTRY_POINT}: the API's entry point and the catalog "
                "(GET /operations/) are not served, and MCP's forms profile has nowhere to start.",
                hint="Include a ResourceRouter's URLs: path('api/', include(router.urls)) "
                f"(they carry the catalog's endpoints, in the {routes.NAMESPACE!r} "
                "namespace; affordances.rest.urls is not included on its own).",
                id="affordances.W008",
            )
        )
    for resource in catalog.resources:
        wanted = [("list", {}), ("detail", {"pk": 1})] + [
            (op.method_name, {"pk": 1}) for op in catalog.transitions_for(resource.model)
        ]
        missing = [
            routes.name(resource.basename, action)
            for action, kwargs in wanted
            if routes.path_or_none(routes.name(resource.basename, action), **kwargs) is None
        ]
        if missing:
            messages.append(
                checks.Warning(
                    f"{resource.options.label}: no URL named {', '.join(missing)}. "
                    "Affordance targets, links and MCP resource URIs would be null.",
                    hint="Register its viewset with affordances.rest.ResourceRouter (one "
                    "per project) and include(router.urls) in the URLconf: its routes are "
                    f'named in the "{routes.NAMESPACE}" namespace.',
                    obj=resource.model,
                    id="affordances.W004",
                )
            )
    return messages


def _check_renderers() -> list[checks.CheckMessage]:
    """W005, W007: HAL-FORMS and HAL are part of the REST face; without their renderers a
    client asking for them gets 406."""
    renderers: list[Any] = list(api_settings.DEFAULT_RENDERER_CLASSES)  # classes, not paths
    messages: list[checks.CheckMessage] = []
    for renderer, consequence, check_id in (
        (HalFormsRenderer, " (and MCP's forms profile reads nothing)", "affordances.W005"),
        (HalRenderer, "", "affordances.W007"),
    ):
        if any(issubclass(cls, renderer) for cls in renderers):
            continue
        messages.append(
            checks.Warning(
                f"REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES'] has no {renderer.__name__}: "
                f"Accept: {renderer.media_type} answers 406{consequence}.",
                hint=f'Add "affordances.rest.renderers.{renderer.__name__}" after the JSON '
                "renderer.",
                id=check_id,
            )
        )
    return messages


def _check_schema_class() -> list[checks.CheckMessage]:
    """W006: drf-spectacular installed but not DRF's schema class."""
    if not apps.is_installed("drf_spectacular"):
        return []
    from drf_spectacular.openapi import AutoSchema

    schema_class: Any = api_settings.DEFAULT_SCHEMA_CLASS  # imported: a class, not a path
    if isinstance(schema_class, type) and issubclass(schema_class, AutoSchema):
        return []
    return [
        checks.Warning(
            "drf_spectacular is installed but REST_FRAMEWORK['DEFAULT_SCHEMA_CLASS'] is not "
            "its AutoSchema: the OpenAPI document cannot be generated.",
            hint='Set "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema".',
            id="affordances.W006",
        )
    ]


def _list_view(resource: Any) -> Any:
    """The view class serving the resource's list route, or None (W004's case)."""
    path = routes.path_or_none(routes.name(resource.basename, "list"))
    if path is None:
        return None
    try:
        func = resolve(path).func
    except Resolver404:
        return None
    return getattr(func, "cls", None)


def _check_lists(catalog: Any) -> list[checks.CheckMessage]:
    """W009, W010, W011: DRF paging and filter settings a resource's REST list cannot
    honour as they read (affordances.rest.paging)."""
    messages: list[checks.CheckMessage] = []
    for resource in catalog.resources:
        view = _list_view(resource)
        if view is None:
            continue
        where = f"The REST list of {resource.options.label} ({view.__name__})"
        pagination_class = getattr(view, "pagination_class", None)
        if pagination_class is not None and not paging.is_driven(pagination_class):
            messages.append(
                checks.Warning(
                    f"{where} has the pagination_class {pagination_class!r}, which is not "
                    "a DRF pagination class: the list answers the app's own page "
                    "(page, page_size) instead.",
                    hint="Use a subclass of rest_framework.pagination.BasePagination "
                    "(PageNumberPagination, LimitOffsetPagination, CursorPagination).",
                    obj=view,
                    id="affordances.W009",
                )
            )
        elif isinstance(pagination_class, type) and issubclass(pagination_class, CursorPagination):
            messages.extend(_check_cursor(where, pagination_class, resource))
        messages.extend(_check_backends(where, view))
    return messages


def _check_cursor(where: str, pagination_class: type, resource: Any) -> list[checks.CheckMessage]:
    """W010: a cursor's position is the value of its ordering's first field: it must be
    a unique field of the model itself, or pages skip and repeat objects."""
    own = paging.own_cursor_ordering(pagination_class)
    ordering: Any = getattr(pagination_class, "ordering", None) if own else resource.ordering
    terms = (ordering,) if isinstance(ordering, str) else tuple(ordering or ())
    first = terms[0].lstrip("-") if terms else ""
    if _is_unique_field(resource.model, first):
        return []
    source = "its own ordering" if own else "the registration's ORDERING"
    return [
        checks.Warning(
            f"{where} is paged by the cursor {pagination_class.__name__} over {source} "
            f"{list(terms)!r}, whose first field {first!r} is not a unique field of "
            f"{resource.model.__name__}: pages would skip or repeat objects sharing a value.",
            hint="Start the ordering with a unique field of the model (the primary key, "
            "a unique timestamp): ORDERING in the registration, or ordering on the class.",
            obj=resource.model,
            id="affordances.W010",
        )
    ]


def _is_unique_field(model: type[models.Model], name: str) -> bool:
    if name == "pk":
        return True
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return False  # a relation's lookup ("customer__name") or no field at all
    if getattr(field, "unique", False):
        return True
    return any(
        isinstance(constraint, models.UniqueConstraint)
        and tuple(constraint.fields) == (name,)
        and constraint.condition is None
        for constraint in model._meta.constraints
    )


def _check_backends(where: str, view: Any) -> list[checks.CheckMessage]:
    """W011: a filter backend the list does not apply, or a django-filter setting of the
    view that the registration's FILTERSET stands in for; W012: regex search fields."""
    messages: list[checks.CheckMessage] = []
    regex = paging.regex_search_fields(getattr(view, "search_fields", None))
    if regex:
        messages.append(
            checks.Warning(
                f"{where} searches {', '.join(regex)} as regular expressions, which it "
                "leaves out: a caller's term would reach the database as a pattern (a "
                "database error when malformed, super-linear work when crafted).",
                hint="Search those fields by words (no prefix), from the start (^) or exactly (=).",
                obj=view,
                id="affordances.W012",
            )
        )
    for backend in getattr(view, "filter_backends", None) or ():
        if backend in paging.applied_backends(view):
            continue
        if not paging.is_django_filter_backend(backend):
            messages.append(
                checks.Warning(
                    f"{where} has the filter backend {backend!r}, which it does not apply: "
                    "only SearchFilter and OrderingFilter (and their subclasses) narrow a "
                    "resource's list, so every face lists the same objects.",
                    hint="Narrow what a caller may see in the registration's QUERYSET and "
                    "filter with its FILTERSET; drop the backend from filter_backends.",
                    obj=view,
                    id="affordances.W011",
                )
            )
        elif getattr(view, "filterset_class", None) or getattr(view, "filterset_fields", None):
            messages.append(
                checks.Warning(
                    f"{where} sets filterset_class or filterset_fields, which it does not "
                    "apply: the registration's FILTERSET is the list's one filter (on MCP "
                    "too), so DjangoFilterBackend adds nothing to it.",
                    hint="Name the FilterSet as FILTERSET in the model's AFFORDANCES "
                    "registration and drop it from the view.",
                    obj=view,
                    id="affordances.W011",
                )
            )
    return messages


# The reads of a resource view that are the registration's: its routes take every object
# through get_queryset() and get_object(); DRF's filter_queryset() runs on none of them.
_VIEW_READS = ("get_queryset", "get_object", "filter_queryset")


def _resource_views(patterns: Any, found: dict[type, None]) -> dict[type, None]:
    """The resource view classes the URLconf routes, in its order (each once)."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _resource_views(pattern.url_patterns, found)
            continue
        view = getattr(getattr(pattern, "callback", None), "cls", None)
        if isinstance(view, type) and issubclass(view, ResourceMixin):
            found[view] = None
    return found


def _check_narrowing() -> list[checks.CheckMessage]:
    """E032: a routed resource view that narrows what a caller may see on its own
    (affordances.visibility): refused, so no object is hidden from one route only."""
    try:
        views = _resource_views(get_resolver().url_patterns, {})
    except Exception:  # a URLconf that does not load is Django's own check's to report
        return []
    messages: list[checks.CheckMessage] = []
    for view in views:
        messages.extend(refused_narrowing(view, _VIEW_READS, face="resource view"))
    return messages


# -- URLs a project's own serializers and URLconf layout need ----------------------------


def _url_names(patterns: Any, namespaces: tuple[str, ...], found: set[tuple[str, ...]]) -> None:
    """Every route name in the URLconf, with the namespaces it is reversed in."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = (*namespaces, pattern.namespace) if pattern.namespace else namespaces
            _url_names(pattern.url_patterns, inner, found)
        elif getattr(pattern, "name", None):
            found.add((*namespaces, pattern.name))


def _reversible(view_name: str, names: set[tuple[str, ...]]) -> bool:
    """Whether some route has ``view_name`` (its namespaces, if it names any, last):
    DRF's reverse, or the library's where the router's URLs are mounted, finds it."""
    wanted = tuple(view_name.split(":"))
    return any(name[-len(wanted) :] == wanted for name in names)


def _hyperlinks(serializer_class: type) -> list[tuple[str, str]]:
    """The (field, view name) of each hyperlink a representation serializer writes."""
    from rest_framework import serializers

    try:
        fields = serializer_class().fields
    except Exception:  # a serializer that needs its context: its own errors show at use
        return []
    links = []
    for field_name, field in fields.items():
        linked = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field
        if isinstance(linked, serializers.HyperlinkedRelatedField) and linked.view_name:
            links.append((field_name, linked.view_name))
    return links


def _check_urls(catalog: Any) -> list[checks.CheckMessage]:
    """E040: a registered serializer's hyperlink names a route no URL has (every list,
    detail and transition of the resource would be a 500). E041: the router's URLs are
    mounted under a pattern capturing keywords the faces cannot fill outside a request of
    that pattern (MCP's links and targets): DRF's ``URLPathVersioning`` without
    ``DEFAULT_VERSION``, or a keyword of the project's own."""
    try:
        names: set[tuple[str, ...]] = set()
        _url_names(get_resolver().url_patterns, (), names)
        mounts = routes.mounts()
    except Exception:  # a URLconf that does not load is Django's own check's to report
        return []
    messages: list[checks.CheckMessage] = []
    for resource in catalog.resources:
        serializer_class = resource.serializer_class
        if serializer_class is None:
            continue
        for field_name, view_name in _hyperlinks(serializer_class):
            if _reversible(view_name, names):
                continue
            messages.append(
                checks.Error(
                    f"{serializer_class.__module__}.{serializer_class.__qualname__}: the "
                    f"hyperlink {field_name!r} names the view {view_name!r}, which no URL "
                    "in the URLconf has: every list, detail and transition of "
                    f"{resource.model._meta.label} would fail.",
                    hint="Name a route the URLconf has: a ResourceRouter names a resource's "
                    "routes DRF's way ('{basename}-detail'), in the namespaces it is "
                    "included under.",
                    obj=serializer_class,
                    id="affordances.E040",
                )
            )
    if mounts:
        captured = mounts[0][1]
        version_param = api_settings.VERSION_PARAM
        unfilled = set(captured)
        if captured == {version_param} and api_settings.DEFAULT_VERSION is not None:
            unfilled = set()
        if unfilled:
            messages.append(
                checks.Error(
                    f"The resource router's URLs are included under a pattern capturing "
                    f"{', '.join(sorted(unfilled))}: outside a request through them (MCP, "
                    "code) the faces' links and targets cannot be reversed, so they would "
                    "be null.",
                    hint=(
                        f"Set REST_FRAMEWORK['DEFAULT_VERSION'] to the version MCP links to "
                        f"(the URL keyword {version_param!r}: DRF's URLPathVersioning)"
                        if unfilled == {version_param}
                        else "Include the router's URLs under a fixed path, or set "
                        "REST_FRAMEWORK['DEFAULT_VERSION'] when the keyword is DRF's "
                        f"version ({version_param!r})"
                    )
                    + ".",
                    id="affordances.E041",
                )
            )
    return messages
