"""The DRF face of affordances: a serializer mixin that adds an object's affordance lists
(``affordances`` and ``unavailableAffordances``, written by :mod:`affordances.entries`)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.urls import NoReverseMatch
from rest_framework import serializers
from rest_framework.reverse import reverse as drf_reverse

from affordances import routes
from affordances.catalog import get_catalog
from affordances.compat.django import fetched_rows
from affordances.entries import Shape, attach, lists_for

__all__ = ["AffordancesMixin", "ResourceUrlField", "affordance_shape", "mounted_reverse"]

# Where ResourceUrlField keeps its URL templates in the serializer context (a request's):
# per view name, format and URL keyword, the request and the URL before and after the id.
_URL_TEMPLATES = "_affordances_urls"
# Where AffordancesMixin keeps the lists of the model it wrote last (the context's shape
# and caller's, built by lists_for): (model, lists).
_ROW_LISTS = "_affordances_rows"
_Template = tuple[Any, tuple[str, str] | None]


def affordance_shape(request: Any) -> Shape:
    """``?affordances=none`` asks for the plain, static representation, ``compact`` for
    entries without what the catalog says; no request, no affordances."""
    if request is None:
        return Shape.NONE
    params = getattr(request, "query_params", None) or getattr(request, "GET", {})
    return Shape.from_param(params.get("affordances"))


def _context_shape(context: dict[str, Any]) -> Shape:
    """The context may decide (True: the stored body of a run, whatever ?affordances
    says; False: none; a Shape); otherwise the request does."""
    asked = context.get("affordances")
    if isinstance(asked, Shape):
        return asked
    if isinstance(asked, bool):
        return Shape.FULL if asked else Shape.NONE
    return affordance_shape(context.get("request"))


class AffordancesMixin:
    """Add to a ModelSerializer of a registered model.

    Needs ``request`` in the serializer context (DRF views provide it). The per-request
    work — the caller's transitions, URL templates — is kept in the shared context, so
    a list of N objects costs no query per object.
    """

    context: dict[str, Any]

    def get_fields(self) -> dict[str, Any]:
        """The serializer's fields; each hyperlink named DRF's way (``volume-detail``)
        reverses where the project mounted the router's URLs too (:func:`mounted_reverse`)."""
        fields: dict[str, Any] = super().get_fields()  # type: ignore[misc]
        for field in fields.values():
            many = isinstance(field, serializers.ManyRelatedField)
            linked = field.child_relation if many else field
            if (
                isinstance(linked, serializers.HyperlinkedRelatedField)
                and linked.view_name
                and linked.reverse is drf_reverse
            ):
                linked.reverse = mounted_reverse
        return fields

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)  # type: ignore[misc]
        context = self.context  # the root serializer's (DRF walks up to it on each read)
        # The lists of this request for this model, found once: a page's rows are alike.
        found = context.get(_ROW_LISTS)
        model = type(instance)
        if found is None or found[0] is not model:
            request = context.get("request")
            user = getattr(request, "user", None)
            lists = lists_for(context, request, user, model, _context_shape(context))
            found = context[_ROW_LISTS] = (model, lists)
            if lists is not None:
                page = _page_of(self, instance)
                if page is not None:
                    lists.prepare(page)
        return attach(data, instance, found[1])


def mounted_reverse(
    viewname: str,
    args: Any = None,
    kwargs: Any = None,
    request: Any = None,
    format: Any = None,
    **extra: Any,
) -> Any:
    """DRF's ``reverse()`` (its versioning's first); a name it does not find is looked for
    where the project mounted the router's URLs, which name their routes DRF's way there
    (``v1:volume-detail`` under an instance namespace ``v1``, nested includes, a version
    in the path): a project's own hyperlinks work wherever it includes the router."""
    try:
        return drf_reverse(viewname, args, kwargs, request=request, format=format, **extra)
    except NoReverseMatch:
        above = routes.mount(request).rpartition(":")[0]  # the namespaces above the app's
        outer = routes.outer_kwargs(request)
        if not above and not outer:
            raise
        name = f"{above}:{viewname}" if above else viewname
        mounted = {**outer, **(kwargs or {})} if not args else kwargs
        return drf_reverse(name, args, mounted, request=request, format=format, **extra)


def _page_of(serializer: Any, instance: Any) -> list[Any] | None:
    """The objects a ListSerializer is writing, when ``instance`` is the first of them
    (a page: a list, or a QuerySet's fetched rows); None otherwise (one object, or a
    list serializer writing something other than its own instance)."""
    parent = getattr(serializer, "parent", None)
    if not isinstance(parent, serializers.ListSerializer):
        return None
    objects = parent.instance
    if isinstance(objects, QuerySet):
        objects = fetched_rows(objects)
    if not isinstance(objects, list | tuple) or not objects or objects[0] is not instance:
        return None
    return [item for item in objects if type(item) is type(instance)]


class ResourceUrlField(serializers.HyperlinkedIdentityField):
    """The object's own URL (its ``detail`` route, reversed in the app's namespace), for
    a registered model's serializer: ``url = ResourceUrlField()``. HAL's ``self`` link,
    MCP resource links and resource URIs read it."""

    def __init__(self, **kwargs: Any) -> None:
        # The route's name depends on the registration: known when an object is written
        # (not when the field is bound, which the catalog's own build does).
        kwargs.setdefault("view_name", "")
        super().__init__(**kwargs)

    def get_url(self, obj: Any, view_name: str, request: Any, format: Any) -> Any:
        if not view_name:
            # Where the project mounted the app's routes (its own namespace, a version's):
            # DRF's versioned reverse falls back to the name as given.
            basename = get_catalog().registered(type(obj)).basename
            view_name = routes.name(basename, "detail", request)
        lookup = getattr(obj, self.lookup_field, None)
        # An integer id (most models') goes into the URL as its digits, whatever the rest
        # of the URL is: the URL is reversed once per request around a placeholder, not
        # once per row (a namespaced reverse was the most expensive part of a list row).
        # Other ids, and unsaved objects, are DRF's own.
        if type(lookup) is int and obj.pk not in (None, "") and request is not None:
            template = self._template(view_name, request, format)
            if template is not None:
                return f"{template[0]}{lookup}{template[1]}"
        return super().get_url(obj, view_name, request, format)

    def _template(self, view_name: str, request: Any, format: Any) -> tuple[str, str] | None:
        """DRF's URL of ``view_name`` for this request around the placeholder id, kept in
        the serializer context with the request it is for (a context kept longer than its
        request never hands a URL on); None: DRF reverses each row."""
        context: Any = self.context  # the root serializer's dict (DRF's stubs: a Mapping)
        templates: dict[tuple[str, Any, str], _Template] = context.setdefault(_URL_TEMPLATES, {})
        # Every argument of the reverse below: two fields of one context naming the same
        # view with other URL keywords must not share a template.
        key = (view_name, format, self.lookup_url_kwarg)
        known = templates.get(key)
        if known is not None and known[0] is request:
            return known[1]
        try:
            url = self.reverse(
                view_name,
                kwargs={self.lookup_url_kwarg: routes.PK_PLACEHOLDER},
                request=request,
                format=format,
            )
        except NoReverseMatch:
            url = ""  # DRF's error, raised row by row as before
        parts = str(url).split(routes.PK_PLACEHOLDER)
        # Exactly one placeholder: the id's place is known (a host or a query that repeats
        # the placeholder leaves it to DRF).
        template = (parts[0], parts[1]) if len(parts) == 2 else None
        templates[key] = (request, template)
        return template
