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
    URLResolver,
    get_resolver,
    get_script_prefix,
    get_urlconf,
    resolve,
    reverse,
)
from django.utils.translation import get_language

from affordances.caches import Cache

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
    "is_detail",
    "list_path",
    "local_name",
    "mount",
    "mounts",
    "name",
    "operation_path",
    "outer_kwargs",
    "path_or_none",
    "reverse_app",
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


def name(basename: str, action: str, request: Any = None) -> str:
    """The same route's name as reversed: in the namespace, where the project mounted
    it (:func:`mount`)."""
    return f"{mount(request)}:{local_name(basename, action)}"


# What the router's own routes capture (the lookup, DRF's format suffix): any other
# keyword of a matched route is captured by the patterns the project included them under.
_OWN_KWARGS = frozenset({"pk", "format"})


def _through_app(request: Any) -> Any:
    """The request's resolved URL when it came through one of the app's routes."""
    match = getattr(request, "resolver_match", None) if request is not None else None
    if match is None or NAMESPACE not in getattr(match, "app_names", ()):
        return None
    return match


def mounts() -> list[tuple[str, frozenset[str]]]:
    """Every place the URLconf includes the app's routes (a ResourceRouter's URLs), in
    its order: the namespace path they are reversed in — ``affordances`` at the top or
    under includes without a namespace, ``v1:affordances`` under the instance namespace
    ``v1`` (a versioned API; DRF's ``NamespaceVersioning``) — and the keywords the
    patterns above them capture (``version``: DRF's ``URLPathVersioning``)."""
    resolver = get_resolver(get_urlconf())

    def walk() -> list[tuple[str, frozenset[str]]]:
        found: list[tuple[str, frozenset[str]]] = []
        _walk(resolver, [], frozenset(), found, depth=0)
        return found

    return _mounts.get(resolver, walk)


_mounts: Cache[Any, list[tuple[str, frozenset[str]]]] = Cache(
    "library mounts", keys="the URLconf's resolver", max_entries=16
)


def _walk(
    resolver: Any,
    path: list[str],
    captured: frozenset[str],
    found: list[tuple[str, frozenset[str]]],
    *,
    depth: int,
) -> None:
    if depth > 32:  # an include of itself: Django's own resolver would recurse too
        return
    for pattern in resolver.url_patterns:
        if not isinstance(pattern, URLResolver):
            continue
        inner = [*path, pattern.namespace] if pattern.namespace else path
        keywords = captured | frozenset(pattern.pattern.regex.groupindex)
        if pattern.app_name == NAMESPACE:
            found.append((":".join(inner), keywords))
            continue
        _walk(pattern, inner, keywords, found, depth=depth + 1)


def mount(request: Any = None) -> str:
    """The namespace path the app's routes are reversed in: the request's own when it
    came through them (a target follows the version it was asked in), else the first
    place the URLconf includes them (:func:`mounts`)."""
    match = _through_app(request)
    if match is not None:
        depth = len(match.app_names) - match.app_names[::-1].index(NAMESPACE)
        return ":".join(match.namespaces[:depth])
    found = mounts()
    return found[0][0] if found else NAMESPACE


def outer_kwargs(request: Any = None) -> dict[str, Any]:
    """The keywords the patterns above the app's routes capture, to reverse them with:
    the request's own (``version`` under DRF's ``URLPathVersioning``), else DRF's
    ``DEFAULT_VERSION`` for a mount whose only such keyword is DRF's ``VERSION_PARAM``
    (a face with no versioned request: MCP). Empty when the mount captures none."""
    match = _through_app(request)
    if match is not None:
        return {k: v for k, v in match.kwargs.items() if k not in _OWN_KWARGS}
    found = mounts()
    needed = found[0][1] if found else frozenset()
    if not needed:
        return {}
    from rest_framework.settings import api_settings

    if needed == {api_settings.VERSION_PARAM} and api_settings.DEFAULT_VERSION is not None:
        return {api_settings.VERSION_PARAM: api_settings.DEFAULT_VERSION}
    return {}


def reverse_app(route: str, request: Any = None, **kwargs: Any) -> str:
    """``reverse()`` of one of the app's routes (``affordances:…``) where the project
    mounted them, with the keywords the patterns above them need; NoReverseMatch as
    ``reverse()``."""
    parts = route.split(":")
    # Whatever namespaces it was spelled with: the name inside the app's.
    local = ":".join(
        parts[len(parts) - parts[::-1].index(NAMESPACE) :] if NAMESPACE in parts else parts
    )
    return reverse(f"{mount(request)}:{local}", kwargs={**outer_kwargs(request), **kwargs} or None)


def path_or_none(route: str, request: Any = None, **kwargs: Any) -> str | None:
    """The path of ``route`` (with ``kwargs``), or None when the URLconf has no such
    route: a project may leave a face or a resource out."""
    try:
        return reverse_app(route, request, **kwargs)
    except NoReverseMatch:
        return None


def list_path(resource: Resource, request: Any = None) -> str | None:
    return _reversed(local_name(resource.basename, "list"), request, with_pk=False)


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


def detail_path(resource: Resource, pk: Any, request: Any = None) -> str | None:
    return path_or_none(local_name(resource.basename, "detail"), request, pk=pk)


def _operation_route(operation: Operation) -> str:
    """The route an operation on one object is sent to: a transition's own, an edit's
    the object's (``PATCH``)."""
    action = "detail" if operation.is_edit else operation.method_name
    assert action is not None
    return local_name(operation.resource.basename, action)


def operation_path(operation: Operation, pk: Any, request: Any = None) -> str | None:
    """Where a transition (or the edit) of the object ``pk`` is sent."""
    return path_or_none(_operation_route(operation), request, pk=pk)


def is_detail(resource: Resource, match: ResolverMatch) -> bool:
    """Whether a resolved URL is one object of ``resource`` (wherever the app's routes
    are mounted)."""
    return (
        bool(match.app_names)
        and match.app_names[-1] == NAMESPACE
        and match.url_name == local_name(resource.basename, "detail")
        and "pk" in match.kwargs
    )


# The paths reversed without an id or with the placeholder id, per URLconf resolver,
# route, script prefix and language (what else reverse() reads): the same for every
# request, so reversed once per process, not once per operation and request. A new
# resolver (clear_url_caches(), another ROOT_URLCONF) is a new key. Bound: 1,024 short
# strings.
_paths: Cache[tuple[Any, str, bool, str, str | None, str], str | None] = Cache(
    "reversed paths",
    keys="the URLconf's resolver, route, with id, script prefix, language, mount",
    max_entries=1024,
)


def _reversed(route: str, request: Any = None, *, with_pk: bool) -> str | None:
    """``route``'s path (a name inside the namespace), with the placeholder as its ``pk``
    or without arguments, where the request's mount puts it (None: not in the URLconf)."""
    resolver = get_resolver(get_urlconf())
    where, outer = mount(request), outer_kwargs(request)
    if outer:
        # Keywords a request's URL captured (a version in the path) may be anything the
        # client wrote: such a path is reversed per call, never kept under a key the
        # client chooses.
        return _reverse_or_none(
            f"{where}:{route}", {**outer, "pk": PK_PLACEHOLDER} if with_pk else outer
        )
    key = (resolver, route, with_pk, get_script_prefix(), get_language(), where)
    return _paths.get(
        key,
        lambda: _reverse_or_none(f"{where}:{route}", {"pk": PK_PLACEHOLDER} if with_pk else {}),
    )


def _reverse_or_none(name: str, kwargs: dict[str, Any]) -> str | None:
    try:
        return reverse(name, kwargs=kwargs or None)
    except NoReverseMatch:
        return None


def _template_path(route: str, request: Any = None) -> str | None:
    """``route``'s path with the placeholder as its ``pk``."""
    return _reversed(route, request, with_pk=True)


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
    return template(_template_path(_operation_route(operation), request), request)
