"""The catalog endpoints of the REST face: the entry point and the operation catalog."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from affordances import routes
from affordances.catalog import get_catalog
from affordances.problems import Problem, ProblemCode
from affordances.protocol import SCHEMA_NAMES, protocol_schema, schema_text
from affordances.rest.base import ProblemResponsesMixin, is_plain
from affordances.rest.memoized import MemoizedResponse
from affordances.rest.openapi_bodies import CATALOG, ENTRY_POINT, SCHEMA_DOCUMENT
from affordances.rest.problem_documents import ProblemSerializer
from affordances.rest.renderers import JSONRenderer

__all__ = [
    "EntryPointView",
    "OperationDetailView",
    "OperationListView",
    "ProblemSerializer",
    "ProtocolSchemaView",
    "representation_etag",
    "vary_private",
]


def vary_private(response: Response) -> Response:
    """The body depends on who asks: shared caches must not serve it to someone else.
    The app's fixed answers (:func:`~affordances.rest.base.is_plain`) stay as they
    are, the same bytes on every route."""
    if is_plain(response):
        return response
    patch_vary_headers(response, ["Authorization", "Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return response


def conditional(request: Request, etag: str, build: Callable[[], Response]) -> HttpResponse:
    """``build()``'s response tagged ``etag``, or what Django's conditional-request
    evaluation (RFC 9110 §13.2.2: ``If-None-Match`` weak-compared, ``*``, ``If-Match``)
    answers instead: a bodiless 304 that keeps the ``ETag``, ``Vary`` and
    ``Cache-Control`` headers, or a 412 problem.

    ``build`` only makes the response object: a memoized body is rendered (or fetched)
    when the response is, which a 304 never is.
    """
    response = build()
    response["ETag"] = etag
    answered = get_conditional_response(request, etag=etag, response=response)
    assert answered is not None  # given a response, Django answers one
    if answered.status_code == status.HTTP_412_PRECONDITION_FAILED:
        raise Problem(
            status=412,
            code=ProblemCode.PRECONDITION_FAILED,
            detail="If-Match does not name this representation's current ETag.",
        )
    return answered


def representation_etag(request: Request, content: str) -> str:
    """A strong ``ETag`` of one representation: the digest of the content with the
    negotiated media type (and its parameters, such as ``indent``) and format folded in.

    A strong validator is unique per representation (RFC 9110 §8.8.1): the catalog as
    JSON, as HAL-FORMS and as HTML — or the OpenAPI document as YAML and as JSON — are
    different bytes, so a tag of one must not answer 304 to a request for another.
    """
    renderer = getattr(request, "accepted_renderer", None)
    media_type = getattr(request, "accepted_media_type", None) or ""
    form = getattr(renderer, "format", None) or ""
    digest = hashlib.sha256("\n".join([content, media_type, form]).encode())
    return f'"{digest.hexdigest()[:32]}"'


class EntryPointView(ProblemResponsesMixin, APIView):
    """``GET /api/``: links to every registered collection and to the catalog."""

    affordances_body_component = ENTRY_POINT
    # What the browsable API and OPTIONS say (the docstring is for developers).
    name = "API entry point"
    description = "Links to the collections and to the catalog of the operations you may use."

    @extend_schema(
        operation_id="entry_point",
        summary="Entry point: links to every collection and the catalog",
        responses={200: OpenApiResponse(description="Links.")},
    )
    def get(self, request: Request) -> Response:
        links: dict[str, Any] = {"self": {"href": request.build_absolute_uri()}}
        for resource in get_catalog().resources:
            path = routes.list_path(resource)
            if path is None:
                continue
            links[resource.plural] = {"href": request.build_absolute_uri(path)}
        links["operations"] = {"href": request.build_absolute_uri(reverse(routes.OPERATION_LIST))}
        return vary_private(Response({"_links": links}))


class OperationListView(ProblemResponsesMixin, APIView):
    """The caller's operation catalog (docs/protocol.md#catalog): stable, cacheable,
    deterministic."""

    affordances_body_component = CATALOG
    name = "Operation catalog"
    description = "The operations you may use, what each does and when it applies."

    @extend_schema(
        operation_id="operations_list",
        summary="The operation catalog",
        responses={200: OpenApiResponse(description="The operation catalog.")},
    )
    def get(self, request: Request) -> HttpResponse:
        catalog = get_catalog()
        operations = catalog.for_user(request.user)
        etag = representation_etag(request, catalog.etag(operations))
        response = vary_private(
            MemoizedResponse(
                {"operations": [catalog.documents[op.name] for op in operations]},
                key=("catalog", tuple(op.name for op in operations)),
            )
        )
        return conditional(request, etag, lambda: response)


class OperationDetailView(ProblemResponsesMixin, APIView):
    """One catalog entry, by name or URN; unknown and not permitted look the same."""

    affordances_body_component = "CatalogEntry"
    name = "Operation"
    description = "One operation of the catalog: what it does and what it takes."

    @extend_schema(
        operation_id="operations_retrieve",
        summary="One operation of the catalog, by name or URN",
        responses={
            200: OpenApiResponse(description="One operation."),
            404: ProblemSerializer,
        },
    )
    def get(self, request: Request, ident: str) -> HttpResponse:
        catalog = get_catalog()
        operation = catalog.resolve(ident, request.user, urn=True)
        if operation is None:
            raise Problem.not_found()
        etag = representation_etag(request, catalog.etag([operation]))
        response = vary_private(
            MemoizedResponse(catalog.documents[operation.name], key=("operation", operation.name))
        )
        return conditional(request, etag, lambda: response)


class SchemaJSONRenderer(JSONRenderer):
    """A JSON Schema document, as ``application/schema+json``."""

    media_type = "application/schema+json"
    format = "schema"


class ProtocolSchemaView(ProblemResponsesMixin, APIView):
    """``GET {api}/schemas/{name}.schema.json``: one JSON Schema of the protocol
    (docs/protocol.md#schemas), the same for every caller and every request."""

    affordances_body_component = SCHEMA_DOCUMENT

    renderer_classes = [SchemaJSONRenderer, JSONRenderer]

    @extend_schema(
        operation_id="protocol_schema",
        summary="A JSON Schema of the protocol's documents",
        responses={
            200: OpenApiResponse(description="A JSON Schema 2020-12 document."),
            404: ProblemSerializer,
        },
    )
    def get(self, request: Request, name: str) -> HttpResponse:
        if name not in SCHEMA_NAMES:
            raise Problem.not_found()
        etag = representation_etag(request, hashlib.sha256(schema_text(name).encode()).hexdigest())
        return conditional(request, etag, lambda: Response(protocol_schema(name)))
