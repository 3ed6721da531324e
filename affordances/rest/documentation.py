"""The OpenAPI description of a registered model's collection, from its registration.

The list and create views are generic; what they take and answer (the filters, the
paging, the page's items, the create operation's input) depends on the model. These
decorate a viewset's own ``list``/``create`` when its routes are made, so the document
says exactly what the one read path and ``perform_create`` do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers

from affordances.operations import Operation
from affordances.resources import Resource

__all__ = ["document_create", "document_list"]

View = Callable[..., Any]


def _filter_parameters(resource: Resource) -> list[OpenApiParameter]:
    filterset_class: Any = resource.filterset_class
    if filterset_class is None:
        return []
    parameters = []
    for name, filter_ in filterset_class.base_filters.items():
        choices = filter_.extra.get("choices")
        parameters.append(
            OpenApiParameter(
                name,
                OpenApiTypes.STR,
                # Empty is "any" (django-filter; the browsable API's filter form sends it).
                enum=[*(str(value) for value, _ in choices), ""] if choices else None,
                description=f"Only {resource.verbose_name_plural} whose "
                f"{filter_.label or name} is this (empty: any).",
            )
        )
    return parameters


def document_list(view: View, resource: Resource, *, page: str, size: str) -> View:
    serializer_class = resource.serializer_class
    parameters = [
        OpenApiParameter(
            page,
            {"type": "integer", "minimum": 1},
            description="A page number, from 1; past the last page is not_found.",
        ),
        OpenApiParameter(
            size,
            {"type": "integer", "minimum": 1, "maximum": resource.max_page_size},
            description=f"Items per page (default {resource.page_size}, "
            f"at most {resource.max_page_size}).",
        ),
        *_filter_parameters(resource),
    ]
    if serializer_class is None:
        return extend_schema(parameters=parameters)(view)
    # One page, not a list of pages: spectacular wraps a list action's answer in an
    # array unless the serializer says many=False.
    page_of = extend_schema_serializer(many=False)(
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
    return extend_schema(parameters=parameters, responses={200: page_of})(view)


def document_create(view: View, operation: Operation) -> View:
    return extend_schema(
        operation_id=operation.name,
        summary=operation.title,
        description=operation.description,
        request=operation.input_serializer,
        responses={201: operation.resource.serializer_class},
    )(view)
