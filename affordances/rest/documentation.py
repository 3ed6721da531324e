"""The OpenAPI description of a registered model's collection, from its registration.

The list and create views are generic; what they take and answer (the filters, the
paging, the page's items, the create operation's input) depends on the model. The app's
``AutoSchema`` asks these when drf-spectacular describes a resource view's ``list`` and
``create`` actions (its documented hooks: nothing is decorated or rewritten on the
view), so the document says exactly what the one read path and ``perform_create`` do.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema_serializer
from rest_framework import serializers

from affordances.caches import cached
from affordances.page_links import PAGE_PARAM, PAGE_SIZE_PARAM
from affordances.resources import Resource
from affordances.schemas import filter_schema

__all__ = ["PAGE_PARAM", "PAGE_SIZE_PARAM", "list_parameters", "page_serializer"]


def _filter_parameters(resource: Resource) -> list[OpenApiParameter]:
    filterset_class: Any = resource.filterset_class
    if filterset_class is None:
        return []
    parameters = []
    model = getattr(filterset_class._meta, "model", None) or resource.model
    for name, filter_ in filterset_class.base_filters.items():
        # The one mapping of a filter to JSON Schema, as the MCP list tool's argument.
        schema = filter_schema(filter_, model)
        if "enum" in schema:
            # Empty is "any" (django-filter; the browsable API's filter form sends it).
            schema["enum"] = [*schema["enum"], ""]
        parameters.append(
            OpenApiParameter(
                name,
                schema,
                explode=True if schema.get("type") == "array" else None,
                description=f"Only {resource.verbose_name_plural} whose "
                f"{filter_.label or name} is this (empty: any).",
            )
        )
    return parameters


def list_parameters(resource: Resource, *, paged: bool = True) -> list[OpenApiParameter]:
    """The list's query parameters: the page, its size and the registration's filters;
    only the filters when a DRF paginator pages the list (``paged=False``: drf-spectacular
    states that paginator's own parameters)."""
    if not paged:
        return _filter_parameters(resource)
    return [
        OpenApiParameter(
            PAGE_PARAM,
            {"type": "integer", "minimum": 1},
            description="A page number, from 1; past the last page is not_found.",
        ),
        OpenApiParameter(
            PAGE_SIZE_PARAM,
            {"type": "integer", "minimum": 1, "maximum": resource.max_page_size},
            description=f"Items per page (default {resource.page_size}, "
            f"at most {resource.max_page_size}).",
        ),
        *_filter_parameters(resource),
    ]


@cached("page serializers", keys="registration", max_entries=64)
def page_serializer(resource: Resource) -> type[serializers.Serializer[Any]] | None:
    """One page of the collection (count, links, the items), as a serializer class: one
    class per registration, so drf-spectacular names one component for it."""
    serializer_class = resource.serializer_class
    if serializer_class is None:
        return None
    # One page, not a list of pages: spectacular wraps a list action's answer in an
    # array unless the serializer says many=False.
    page_of: type[serializers.Serializer[Any]] = extend_schema_serializer(many=False)(
        type(
            f"Paginated{serializer_class.__name__.removesuffix('Serializer')}List",
            (serializers.Serializer,),
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": serializer_class(many=True),
            },
        )
    )
    return page_of
