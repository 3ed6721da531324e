"""The OpenAPI document as one more face of the catalog, exactly as strict as the server.

:class:`AutoSchema` is drf-spectacular's, stating what DRF enforces and spectacular
leaves out: a ``CharField`` refuses ``""``, whitespace alone and NUL characters; the
app's decimals take a JSON number or a plain decimal string, within the field's digits
and bounds; every operation has a summary and a tag. A registered resource's schema
lists its affordances (the protocol's entries, :mod:`affordances.rest.openapi_bodies`);
its views declare ``?affordances=``; a transition takes a body (its ``expectedVersion``
at least), ``If-Match`` and ``Idempotency-Key``, as an object's edit (``PATCH``, only
where the registration declares one) does, a create ``Idempotency-Key``; answers
declare ``ETag``, ``Idempotent-Replayed`` and ``Location`` where the views send them; the
catalog views' bodies and their ``If-None-Match``/``304`` are stated.

:func:`postprocess` (a spectacular hook): served to a caller, the document leaves out
every operation that caller lacks the capability for (and the components only they
used), like every other face. An operation's input refuses unknown properties, and a
transition's also takes ``expectedVersion``. It states the error model: each operation
answers the statuses of ``ERROR_STATUSES`` it can answer, each a problem document
(``application/problem+json``), a transition's 409 and 412 with the object as
``current``; HAL and HAL-FORMS bodies are described as such, not as the JSON
representation. It names the server it is served from, declares every tag, and states
``security: []`` on operations that take no credentials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from django.urls import NoReverseMatch, get_script_prefix, reverse
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema_serializer
from rest_framework import serializers

from affordances import routes
from affordances.caches import cached
from affordances.catalog import get_catalog
from affordances.constraints import narrow_property
from affordances.encoding import canonical_json
from affordances.entries import create_constraints
from affordances.fieldschema import add_text_rules
from affordances.idempotency import MAX_KEY_LENGTH
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.operations import Kind
from affordances.problems import PROBLEM_CONTENT_TYPE, PROBLEM_SCHEMA
from affordances.protocol import PROTOCOL_VERSION, SCHEMA_NAMES
from affordances.rest import (
    openapi_fields,  # noqa: F401  (registers the field extensions)
    paging,
)
from affordances.rest.documentation import list_parameters, page_serializer
from affordances.rest.openapi_bodies import (
    AFFORDANCE_LIST_PROPERTIES,
    CATALOG,
    COMPONENTS,
    HAL,
    HAL_FORMS,
    SCHEMA_DOCUMENT,
    from_openapi,
    openapi_dialect,
    ref,
)
from affordances.rest.problem_documents import (
    BODY_COMPONENT_ATTRIBUTE,
    ProblemSerializer,
)
from affordances.rest.renderers import HAL_MEDIA_TYPE
from affordances.rest.serializers import AffordancesMixin
from affordances.vocabulary import version_schema

__all__ = ["ERROR_STATUSES", "AutoSchema", "caller_key", "postprocess"]


class AutoSchema(SpectacularAutoSchema):
    """``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``; the app's own views use it anyway."""

    _direction = "response"

    def _map_basic_serializer(self, serializer: Any, direction: str) -> Any:
        outer, self._direction = self._direction, direction
        try:
            schema = super()._map_basic_serializer(serializer, direction)  # type: ignore[no-untyped-call]
        finally:
            self._direction = outer
        if direction == "response" and _lists_affordances(serializer):
            # What AffordancesMixin adds to the fields: the lists, in the protocol's
            # entries (not required: ?affordances=none leaves them out).
            schema.setdefault("properties", {}).update(AFFORDANCE_LIST_PROPERTIES)
        return schema

    def _insert_field_validators(self, field: Any, schema: dict[str, Any]) -> None:
        super()._insert_field_validators(field, schema)  # type: ignore[no-untyped-call]
        if self._direction == "request":
            add_text_rules(field, schema)

    # -- a resource view's collection: its registration says what list and create take
    # and answer (drf-spectacular's hooks; an @extend_schema of the view still wins).

    def _action(self) -> str | None:
        return getattr(self.view, "action", None)

    def _create(self) -> Any:
        resource = _resource_of(self.view)
        if resource is None or self._action() != "create":
            return None
        return get_catalog().create_for(resource.model)

    def _edit(self) -> Any:
        """The registration's edit, on an object's PATCH (None: it declares none)."""
        resource = _resource_of(self.view)
        if resource is None or self._action() != "partial_update":
            return None
        return get_catalog().edit_for(resource.model)

    def _transition_name(self) -> str | None:
        return getattr(self.view, "transition_name", None)

    def _operation(self) -> Any:
        """The operation this endpoint runs: the collection's create, the object's edit,
        or the transition of a transition route (None while it is switched off)."""
        name = self._transition_name()
        if name is None:
            return self._create() or self._edit()
        model: Any = getattr(self.view, "model", None)
        return get_catalog().transition(model, name)

    def _runs_on_object(self) -> bool:
        """A transition route, or the object's edit (PATCH): a run on one object."""
        operation = self._operation()
        return operation is not None and (
            self._transition_name() is not None or operation.kind == Kind.EDIT
        )

    def is_excluded(self) -> bool:
        # A transition route whose operation is not in the catalog (switched off when the
        # document is made), or an object's PATCH where the registration declares no
        # edit: not in the document either.
        if self._transition_name() is not None and self._operation() is None:
            return True
        if self._action() == "partial_update" and self._edit() is None:
            return True
        return bool(super().is_excluded())

    def get_operation_id(self) -> str:
        operation = self._operation()
        if operation is not None:
            return str(operation.name)
        return str(super().get_operation_id())

    def get_description(self) -> str:  # type: ignore[override]
        operation = self._operation()
        if operation is not None:
            return str(operation.description)
        return str(super().get_description())

    def get_request_serializer(self) -> Any:
        operation = self._operation()
        if operation is not None and operation.input_serializer is None:
            # A transition without inputs still takes its version in the body
            # (_strict_inputs states it); a create without inputs takes nothing.
            return _version_only(operation.name) if self._transition_name() else None
        if operation is not None:
            return operation.input_serializer
        return super().get_request_serializer()

    def _list_resource(self) -> Any:
        """The registration of a resource view's list action; None for any other."""
        resource = _resource_of(self.view)
        return resource if resource is not None and self._action() == "list" else None

    def _drf_paginator(self) -> Any:
        resource = self._list_resource()
        return None if resource is None else paging.paginator_for(self.view, resource)

    def _get_paginator(self) -> Any:
        # The paginator the list drives (none when its class is no DRF paginator): its
        # parameters and its page's shape are what spectacular states.
        if self._list_resource() is not None:
            return self._drf_paginator()
        return super()._get_paginator()  # type: ignore[no-untyped-call]

    def get_filter_backends(self) -> list[Any]:
        # The backends the list applies, not the ones it leaves alone (affordances.W011).
        if self._list_resource() is not None:
            return paging.applied_backends(self.view)
        return list(super().get_filter_backends())

    def get_response_serializers(self) -> Any:
        resource = _resource_of(self.view)
        if resource is not None and self._action() == "list":
            if self._drf_paginator() is not None and resource.serializer_class is not None:
                # A list of the items: spectacular wraps it in the paginator's page.
                return resource.serializer_class
            page = page_serializer(resource)
            return {200: page} if page is not None else super().get_response_serializers()
        operation = self._operation()
        if self._runs_on_object():
            problems = {code: ProblemSerializer for code in (400, 404, 409, 412, 422)}
            return {200: operation.resource.serializer_class, **problems}
        if operation is not None:
            return {201: operation.resource.serializer_class}
        return super().get_response_serializers()

    def get_override_parameters(self) -> list[Any]:
        parameters: list[Any] = list(super().get_override_parameters())
        resource = _resource_of(self.view)
        if resource is not None and self._action() == "list":
            parameters += list_parameters(resource, paged=self._drf_paginator() is None)
        # Every answer of a resource view that carries a representation is shaped by
        # ?affordances= (affordances.rest.serializers.affordance_shape).
        transition = self._runs_on_object()  # a transition, or the edit
        create = self._create() is not None
        if resource is not None and (
            self._action() in ("list", "retrieve") or transition or create
        ):
            parameters.append(_SHAPE)
        if self._action() == "retrieve" and resource is not None:
            parameters.append(_response_header("ETag", [200]))
        if transition:
            parameters += [_IF_MATCH_HEADER, _IDEMPOTENCY_KEY_HEADER]
            parameters += [_response_header("ETag", [200]), _response_header(_REPLAYED, [200])]
        elif create:
            parameters.append(_IDEMPOTENCY_KEY_HEADER)
            parameters += [
                _response_header(name, [201]) for name in ("ETag", "Location", _REPLAYED)
            ]
        if self._conditional():
            parameters += [_IF_NONE_MATCH_HEADER, _response_header("ETag", [200, 304])]
        return parameters

    # -- the app's own views: the catalog, the entry point, the protocol's schemas ----

    def _app_body(self) -> str | None:
        """The component of the 2xx body of one of the app's catalog views, which
        declare a description only (their bodies are no serializer's)."""
        component = getattr(self.view, BODY_COMPONENT_ATTRIBUTE, None)
        return component if isinstance(component, str) else None

    def _conditional(self) -> bool:
        """Whether the view answers If-None-Match with 304 (the catalog and the schemas)."""
        return self._app_body() in (CATALOG, "CatalogEntry", SCHEMA_DOCUMENT)

    def _get_response_for_code(
        self,
        serializer: Any,
        status_code: str,
        media_types: Any = None,
        direction: str = "response",
    ) -> Any:
        component = self._app_body()
        if (
            component is not None
            and status_code.startswith("2")
            and isinstance(serializer, OpenApiResponse)
            and serializer.response is None
        ):
            serializer = OpenApiResponse(
                response=ref(component), description=serializer.description
            )
        return super()._get_response_for_code(  # type: ignore[no-untyped-call]
            serializer, status_code, media_types, direction
        )

    def _get_response_bodies(self, direction: Literal["request", "response"] = "response") -> Any:
        responses = super()._get_response_bodies(direction)
        if self._conditional():
            responses["304"] = {
                "description": "Not modified: the If-None-Match tag is the current one.",
                "headers": self._get_response_headers_for_code("304", direction),
            }
        return responses

    def get_tags(self) -> list[str]:
        # spectacular tags an operation by its first path segment after the common
        # prefix; the entry point (the prefix itself) would have none (operation-tags).
        tags = list(super().get_tags())
        return tags or [self.path.strip("/").rsplit("/", 1)[-1] or "api"]

    def get_summary(self) -> str | None:
        operation = self._operation()
        if operation is not None:
            return str(operation.title)
        summary = super().get_summary()
        if summary:
            return str(summary)
        resource = _resource_of(self.view)
        action = getattr(self.view, "action", None)
        if resource is not None and action == "list":
            return f"List {resource.verbose_name_plural}"
        if resource is not None and action == "retrieve":
            return f"Get one {resource.verbose_name}"
        # Any other view: its operation id, read as words ("token_refresh_create").
        return str(self.get_operation_id()).replace("_", " ").capitalize()


_REPLAYED = "Idempotent-Replayed"
_SHAPE = OpenApiParameter(
    "affordances",
    {"type": "string", "enum": ["none", "compact"]},
    description="The affordance lists' shape: absent for full entries (the default), "
    "compact for entries without what the catalog says, none for no lists "
    "(docs/protocol.md#compact). Any other value is a validation_error.",
)
_IF_MATCH_HEADER = OpenApiParameter(
    "If-Match",
    # affordances.rest.viewsets._if_match: a quoted version, or * (any version).
    {"type": "string", "pattern": '^\\s*("[0-9]{1,19}"|\\*)\\s*$'},
    location=OpenApiParameter.HEADER,
    description='The version you acted on, quoted ("3"; the affordance\'s validForVersion, '
    "the representation's ETag), or * for any: a stale one is refused with 412 "
    "stale_version. Or send expectedVersion; both given and different: 400.",
)
_IDEMPOTENCY_KEY_HEADER = OpenApiParameter(
    "Idempotency-Key",
    # affordances.idempotency.parse_key: %x21-7E, 1 to MAX_KEY_LENGTH.
    {"type": "string", "pattern": f"^[!-~]{{1,{MAX_KEY_LENGTH}}}$"},
    location=OpenApiParameter.HEADER,
    description="A retry with the same key, operation, object and arguments replays the "
    "stored success (Idempotent-Replayed: true) and runs nothing; the same key with "
    "anything else is 422 idempotency_key_reused, while the first still runs 409 "
    "idempotency_key_in_use (docs/protocol.md#races).",
)
_IF_NONE_MATCH_HEADER = OpenApiParameter(
    "If-None-Match",
    {"type": "string"},
    location=OpenApiParameter.HEADER,
    description="ETags of representations you hold (or *): 304 when one is current.",
)
_RESPONSE_HEADERS: dict[str, tuple[dict[str, Any], str]] = {
    "ETag": (
        {"type": "string", "pattern": '^"[^"]*"$'},
        "A strong validator: for an object, its version (send it back as If-Match).",
    ),
    "Location": ({"type": "string", "format": "uri"}, "The created object's URL."),
    _REPLAYED: (
        {"type": "string", "enum": ["true"]},
        "Present when this is the stored success of an earlier request with the same "
        "Idempotency-Key: nothing ran again.",
    ),
}


def _response_header(name: str, statuses: list[int]) -> OpenApiParameter:
    schema, description = _RESPONSE_HEADERS[name]
    return OpenApiParameter(
        name, schema, location=OpenApiParameter.HEADER, response=statuses, description=description
    )


@cached("version-only bodies", keys="operation name", max_entries=256)
def _version_only(name: str) -> type[serializers.Serializer[Any]]:
    """The body of a transition without inputs, one component per operation
    (``confirm_order`` → ``ConfirmOrderInput``): its ``expectedVersion``, optional."""
    component = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name)) + "Input"
    body: type[serializers.Serializer[Any]] = extend_schema_serializer(component_name=component)(
        type(
            component,
            (serializers.Serializer,),
            {"expectedVersion": serializers.IntegerField(required=False)},
        )
    )
    return body


def _lists_affordances(serializer: Any) -> bool:
    """A registered model's serializer with :class:`AffordancesMixin`: its representation
    carries the affordance lists."""
    model = getattr(getattr(serializer, "Meta", None), "model", None)
    return (
        isinstance(serializer, AffordancesMixin)
        and model is not None
        and get_catalog().resource_for(model) is not None
    )


def _resource_of(view: Any) -> Any:
    model = getattr(view, "model", None)
    return get_catalog().resource_for(model) if model is not None else None


ERROR_STATUSES = {
    "400": "Malformed request or invalid arguments (malformed_request, validation_error).",
    "401": "Not authenticated (not_authenticated).",
    "404": "Not found (not_found) — also what an object or operation you may not see looks like.",
    "405": "Method not allowed (method_not_allowed).",
    "406": "Not acceptable (not_acceptable).",
    "409": "Not available now (operation_not_available, with its reason and the object as "
    "it is now), failed and rolled back (transition_failed), or an idempotency key still "
    "in use (idempotency_key_in_use).",
    "412": "Stale version (stale_version, with the object as it is now).",
    "413": "Request too large (request_too_large).",
    "415": "Unsupported media type (unsupported_media_type).",
    "422": "Idempotency key reused for another request (idempotency_key_reused).",
    "429": "Too many requests (throttled).",
    "503": "The object is busy with another change (lock_timeout); nothing ran.",
}
# Which statuses an operation may answer: every one of these; one with a body also 413
# and 415; one that runs an operation (create, transition) also 409, 422 and 503; one on
# an object's version (a transition) also 412.
_EVERY_STATUS = ("400", "401", "404", "405", "406", "429")
_BODY_STATUSES = ("413", "415")
_RUN_STATUSES = ("409", "422", "503")
_VERSION_STATUSES = ("412",)
# Statuses whose problem may carry the object as it is now (docs/protocol.md#races).
_CURRENT_STATUSES = ("409", "412")
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds after which the same request may succeed.",
        "schema": {"type": "integer", "minimum": 0},
    }
}
_HAL_BODIES = {HAL_FORMS_MEDIA_TYPE: HAL_FORMS, HAL_MEDIA_TYPE: HAL}
_METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}
# The Problem component: PROBLEM_SCHEMA without ``current``, which only the problems of
# a transition carry — typed there as the object (``{Resource}Problem``).
_PROBLEM = {
    **PROBLEM_SCHEMA,
    "properties": {k: v for k, v in PROBLEM_SCHEMA["properties"].items() if k != "current"},
}


def postprocess(
    result: dict[str, Any], generator: Any, request: Any, public: bool, **kwargs: Any
) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is not None:
        _hide_operations(result, user)
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method in _METHODS:
                _complete_responses(operation, schemas)
                _strict_inputs(operation, schemas, user)
                # Explicit: the token endpoints take no credentials (Redocly: security-defined).
                operation.setdefault("security", [])
    schemas["Problem"] = _PROBLEM
    for name, component in COMPONENTS.items():
        schemas.setdefault(name, component)
    if not result.get("servers"):
        # Paths are written from the URLconf's root: the server is this site's root —
        # without a request (manage.py spectacular), relative to where the document is.
        root = _server_root(request) if request is not None else get_script_prefix()
        result["servers"] = [{"url": root.rstrip("/") or "/"}]
    protocol_schemas = _protocol_schema_urls(request)
    if protocol_schemas:
        # An extension, not a $ref: a 2020-12 schema is no OpenAPI 3.0 Schema Object.
        result["x-affordances-protocol"] = {
            "version": PROTOCOL_VERSION,
            "schemas": protocol_schemas,
        }
    _prune_components(result)
    result["tags"] = _tags(result)
    return result


def _tags(result: dict[str, Any]) -> list[dict[str, str]]:
    """Every tag the operations use, described (Spectral: operation-tag-defined; Redocly:
    tag-description): a collection's by its resource, another's by its operations."""
    # By the tag spectacular gives their collection: its last path segment.
    resources: dict[str, Any] = {}
    for resource in get_catalog().resources:
        path = routes.list_path(resource)
        if path is not None:
            resources[path.strip("/").rsplit("/", 1)[-1]] = resource
    summaries: dict[str, list[str]] = {}
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method in _METHODS:
                for tag in operation.get("tags", []):
                    summaries.setdefault(tag, []).append(str(operation.get("summary", "")))
    tags = []
    for name in sorted(summaries):
        described = resources.get(name)
        if described is not None:
            plural = str(described.verbose_name_plural)
            description = (
                f"{plural[:1].upper()}{plural[1:]}: the collection, each one and its operations."
            )
        else:
            description = "; ".join(dict.fromkeys(summaries[name])) + "."
        tags.append({"name": name, "description": description})
    return tags


def _protocol_schema_urls(request: Any) -> dict[str, str]:
    """Where this server serves the protocol's JSON Schemas (docs/protocol.md#schemas):
    absolute URLs with a request, paths without; none when the app's routes (a
    :class:`~affordances.rest.ResourceRouter`'s) are not in the URLconf."""
    urls: dict[str, str] = {}
    for name in SCHEMA_NAMES:
        try:
            path = reverse(routes.PROTOCOL_SCHEMA, kwargs={"name": name})
        except NoReverseMatch:
            return {}
        urls[name] = str(request.build_absolute_uri(path)) if request is not None else path
    return urls


def caller_key(request: Any) -> tuple[Any, ...]:
    """Everything of the request that :func:`postprocess` reads: the operations the
    caller may know about, the constraints of its create operations, the server root.
    Two requests with the same key are served the same document (``SchemaView``)."""
    user = getattr(request, "user", None)
    if user is None:
        return (None, None, None)
    operations = get_catalog().for_user(user)
    creates = tuple(
        (op.name, canonical_json(_create_constraints(op, user)))
        for op in operations
        if op.kind == Kind.CREATE
    )
    return (tuple(op.name for op in operations), creates, _server_root(request))


def _server_root(request: Any) -> str:
    # Paths are written from the URLconf's root: the server is this site's root.
    return str(request.build_absolute_uri(get_script_prefix())).rstrip("/")


def _create_constraints(operation: Any, user: Any) -> Mapping[str, Any]:
    return create_constraints(operation, user) or {}


# The catalog's schema of the version (an integer, or its digits as a string).
_EXPECTED_VERSION = version_schema(
    "The version you acted on (the affordance's validForVersion); a stale one is refused "
    "with 412 stale_version. Or send it as If-Match."
)


def _strict_inputs(operation: dict[str, Any], schemas: dict[str, Any], user: Any) -> None:
    """The body of a catalog operation takes its input serializer's fields and nothing
    else (``Unknown argument.``); a transition's also its ``expectedVersion``. A create
    operation's constraints depend on the caller alone, so this caller's are stated."""
    found = get_catalog().lookup(str(operation.get("operationId", "")))
    if found is None or found.kind == Kind.READ:
        return
    done: list[dict[str, Any]] = []  # the media types of a body mostly share one schema
    for media in operation.get("requestBody", {}).get("content", {}).values():
        schema = media.get("schema", {})
        ref = schema.get("$ref", "")
        target = schemas.get(ref.rsplit("/", 1)[-1]) if ref else schema
        if not isinstance(target, dict) or any(target is seen for seen in done):
            continue
        done.append(target)
        target["additionalProperties"] = False
        target.setdefault("properties", {})
        target.setdefault("type", "object")
        if found.kind in (Kind.TRANSITION, Kind.EDIT):
            target["properties"]["expectedVersion"] = _EXPECTED_VERSION
        elif found.kind == Kind.CREATE and user is not None:
            # Generated without a caller (manage.py spectacular): no caller's constraints.
            constraints = _create_constraints(found, user)
            if constraints:
                _narrow(target, constraints, schemas)


def _narrow(
    schema: dict[str, Any], constraints: Mapping[str, Any], components: Mapping[str, Any]
) -> None:
    """Apply constraints to an OpenAPI 3.0 object schema, in place: each input merged with
    its constraint as every face merges it (:func:`affordances.constraints.narrow_property`,
    the tighter bound winning), written back in OpenAPI's dialect."""
    required = [*schema.get("required", [])]
    required += [name for name in constraints.get("required", []) if name not in required]
    if required:
        schema["required"] = required
    for name, narrowed in constraints.get("properties", {}).items():
        base = from_openapi(_resolved(schema["properties"].get(name, {}), components))
        schema["properties"][name] = openapi_dialect(narrow_property(base, narrowed))


def _resolved(prop: Mapping[str, Any], components: Mapping[str, Any]) -> dict[str, Any]:
    """A property with the component it refers to written out (a choice's enum is a
    component of its own, ``$ref`` or ``allOf: [$ref]``): what a constraint narrows."""

    def component(node: Any) -> dict[str, Any] | None:
        ref = node.get("$ref", "") if isinstance(node, dict) else ""
        found = components.get(ref.rsplit("/", 1)[-1]) if ref else None
        return dict(found) if isinstance(found, dict) else None

    own = {key: value for key, value in prop.items() if key not in ("$ref", "allOf")}
    nodes = [prop] if "$ref" in prop else list(prop.get("allOf", []))
    referred = [component(node) for node in nodes]
    if not referred or any(found is None for found in referred):
        return dict(prop)
    merged: dict[str, Any] = {}
    for found in referred:
        merged.update(found or {})
    return {**merged, **own}


def _hide_operations(result: dict[str, Any], user: Any) -> None:
    catalog = get_catalog()
    for path, methods in list(result.get("paths", {}).items()):
        for method in [m for m in methods if m in _METHODS]:
            operation = catalog.lookup(str(methods[method].get("operationId", "")))
            if operation is not None and not operation.permits(user):
                del methods[method]
        if not any(m in _METHODS for m in methods):
            del result["paths"][path]


def _complete_responses(operation: dict[str, Any], schemas: dict[str, Any]) -> None:
    """Each status the operation may answer (see ``_EVERY_STATUS``), an error always as a
    problem document whatever the Accept header asked for; HAL bodies as HAL."""
    found = get_catalog().lookup(str(operation.get("operationId", "")))
    kind = None if found is None else found.kind
    statuses = [*_EVERY_STATUS]
    if "requestBody" in operation:
        statuses += _BODY_STATUSES
    if kind in (Kind.CREATE, Kind.TRANSITION, Kind.EDIT):
        statuses += _RUN_STATUSES
    on_object = kind in (Kind.TRANSITION, Kind.EDIT)
    if on_object:
        statuses += _VERSION_STATUSES
    responses = operation.setdefault("responses", {})
    for status in statuses:
        responses.setdefault(status, {})
    current = _current_problem(responses, schemas) if on_object else None
    for status, response in responses.items():
        content = response.get("content")
        if status.startswith("2") and content:
            for media_type, component in _HAL_BODIES.items():
                if media_type in content:
                    content[media_type] = {"schema": ref(component)}
        elif not status.startswith(("1", "2", "3")):
            # Errors are problem documents, whatever the Accept header asked for.
            problem = current if status in _CURRENT_STATUSES and current else "Problem"
            response["content"] = {PROBLEM_CONTENT_TYPE: {"schema": ref(problem)}}
            if not response.get("description"):
                response["description"] = ERROR_STATUSES.get(status, "A problem.")
            if status in ("429", "503"):
                response["headers"] = {**response.get("headers", {}), **_RETRY_AFTER}


def _current_problem(responses: dict[str, Any], schemas: dict[str, Any]) -> str | None:
    """``{Resource}Problem``: the problem document of a transition on that resource, its
    ``current`` typed as the representation its success answers (the ``200``'s)."""
    schema = responses.get("200", {}).get("content", {}).get("application/json", {})
    target = str(schema.get("schema", {}).get("$ref", "")).rsplit("/", 1)[-1]
    if not target:
        return None
    name = f"{target}Problem"
    schemas.setdefault(
        name,
        {
            **_PROBLEM,
            "properties": {
                **_PROBLEM["properties"],
                "current": {
                    "allOf": [ref(target)],
                    "description": PROBLEM_SCHEMA["properties"]["current"]["description"],
                },
            },
        },
    )
    return name


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = set()
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            found.add(ref.rsplit("/", 1)[-1])
        for value in node.values():
            found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(item) for item in node)) if node else set()
    return set()


def _prune_components(result: dict[str, Any]) -> None:
    """Drop schemas no remaining path reaches (e.g. the input of a hidden operation)."""
    schemas = result.get("components", {}).get("schemas", {})
    reachable = _refs(result.get("paths", {}))
    pending = list(reachable)
    while pending:
        name = pending.pop()
        for referred in _refs(schemas.get(name, {})) - reachable:
            reachable.add(referred)
            pending.append(referred)
    for name in list(schemas):
        if name not in reachable:
            del schemas[name]
