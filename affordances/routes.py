"""The URLs of a registered resource: every route name is spelled here, and only here.

Every route of the app lives under one URL namespace, ``affordances``: the API's entry
point and catalog (``affordances:entry-point``, ``affordances:operation-list``,
``affordances:operation-detail``) and each registered resource's routes,
``affordances:{basename}-{action}`` (``list``, ``detail``, one per transition method),
all added by :class:`affordances.rest.ResourceRouter`. The faces ask this module for
paths and templates instead of assembling names, so a route is renamed in one place,
and a project's own URL names never collide with the app's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import (
    NoReverseMatch,
    Resolver404,
    ResolverMatch,
    get_resolver,
    get_script_prefix,
    get_urlconf,
    resolve,
    reverse,
)
from django.utils.translation import get_language

from affordances import registry

if TYPE_CHECKING:
    from affordances.operations import Operation
    from affordances.resources import Resource

__all__ = [
    "ENTRY_POINT",
    "ENTRY_POINT_NAME",
    "NAMESPACE",
    "OPERATION_DETAIL",
    "OPERATION_DETAIL_NAME",
    "OPERATION_LIST",
    "OPERATION_LIST_NAME",
    "PK_PLACEHOLDER",
    "PROTOCOL_SCHEMA",
    "PROTOCOL_SCHEMA_NAME",
    "detail_path",
    "detail_template",
    "is_detail",
    "list_path",
    "local_name",
    "name",
    "operation_path",
    "path_or_none",
    "target_template",
    "template",
]

# The app's URL namespace (the application namespace of ResourceRouter's URLs).
NAMESPACE = "affordances"
# The catalog's endpoints, by their names inside the namespace (``affordances.rest.urls``)
# and as reversed.
ENTRY_POINT_NAME = "entry-point"
OPERATION_LIST_NAME = "operation-list"
OPERATION_DETAIL_NAME = "operation-detail"
PROTOCOL_SCHEMA_NAME = "protocol-schema"
ENTRY_POINT = f"{NAMESPACE}:{ENTRY_POINT_NAME}"
OPERATION_LIST = f"{NAMESPACE}:{OPERATION_LIST_NAME}"
OPERATION_DETAIL = f"{NAMESPACE}:{OPERATION_DETAIL_NAME}"
PROTOCOL_SCHEMA = f"{NAMESPACE}:{PROTOCOL_SCHEMA_NAME}"

# Stands for an object's id in a reversed URL that is then used as a template.
PK_PLACEHOLDER = "__affordances_pk__"


def local_name(basename: str, action: str) -> str:
    """The name, inside the namespace, of ``action`` (``list``, ``detail``,
    ``unmatched`` or a transition method) on the resource registered as ``basename``:
    what the router names the route."""
    return f"{basename}-{action}"


def name(basename: str, action: str) -> str:
    """The same route's name as reversed (namespaced)."""
    return f"{NAMESPACE}:{local_name(basename, action)}"


def path_or_none(route: str, **kwargs: Any) -> str | None:
    """The path of ``route`` (with ``kwargs``), or None when the URLconf has no such
    route: a project may leave a face or a resource out."""
    try:
        return reverse(route, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


def list_path(resource: Resource) -> str | None:
    return _reversed(name(resource.basename, "list"), with_pk=False)


def list_view(resource: Resource) -> Any:
    """The view class serving ``resource``'s collection, or None (not routed)."""
    path = list_path(resource)
    if path is None:
        return None
    try:
        match = resolve(path)
    except Resolver404:
        return None
    return getattr(match.func, "cls", None)


def detail_path(resource: Resource, pk: Any) -> str | None:
    return path_or_none(name(resource.basename, "detail"), pk=pk)


def operation_path(operation: Operation, pk: Any) -> str | None:
    """Where a transition of the object ``pk`` is sent."""
    assert operation.method_name is not None
    return path_or_none(name(operation.resource.basename, operation.method_name), pk=pk)


def is_detail(resource: Resource, match: ResolverMatch) -> bool:
    """Whether a resolved URL is one object of ``resource``."""
    return match.view_name == name(resource.basename, "detail") and "pk" in match.kwargs


# The paths reversed without an id or with the placeholder id, per route, script prefix
# and language (what else reverse() reads), each with the URLconf's resolver it was
# reversed with: the same for every request, so reversed once per process, not once per
# operation and request. A new resolver (clear_url_caches(), another ROOT_URLCONF)
# reverses them again. Bound: 1,024 short strings.
_PATHS_MAX = 1024
_paths: dict[tuple[str, bool, str, str | None], tuple[Any, str | None]] = {}
# Reversed from the URLconf and the settings.
registry.derived(_paths.clear)


def _reversed(route: str, *, with_pk: bool) -> str | None:
    """``route``'s path, with the placeholder as its ``pk`` or without arguments (None:
    not in the URLconf)."""
    resolver = get_resolver(get_urlconf())
    key = (route, with_pk, get_script_prefix(), get_language())
    known = _paths.get(key)
    if known is not None and known[0] is resolver:
        return known[1]
    path = path_or_none(route, pk=PK_PLACEHOLDER) if with_pk else path_or_none(route)
    if len(_paths) >= _PATHS_MAX:
        _paths.clear()
    _paths[key] = (resolver, path)
    return path


def _template_path(route: str) -> str | None:
    """``route``'s path with the placeholder as its ``pk``."""
    return _reversed(route, with_pk=True)


def template(path: str | None, request: Any) -> tuple[str, str] | None:
    """A path reversed with the placeholder id as the (absolute, with a request) URL
    before and after the id."""
    if path is None:
        return None
    url = request.build_absolute_uri(path) if request is not None else path
    # The last one: a script prefix may (absurdly) contain the placeholder; the route's
    # own segments after the id never do.
    before, _, after = url.rpartition(PK_PLACEHOLDER)
    return before, after


def target_template(operation: Operation, request: Any) -> tuple[str, str] | None:
    """The operation's URL before and after the object's id (its path reversed once per
    process, made absolute once per request)."""
    assert operation.method_name is not None
    route = name(operation.resource.basename, operation.method_name)
    return template(_template_path(route), request)


def detail_template(resource: Resource, request: Any) -> tuple[str, str] | None:
    """An object's URL before and after its id."""
    return template(_template_path(name(resource.basename, "detail")), request)
