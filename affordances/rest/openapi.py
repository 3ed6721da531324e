"""The OpenAPI document as one more face of the catalog, exactly as strict as the server.

:class:`AutoSchema` is drf-spectacular's, stating what DRF enforces and spectacular
leaves out: a ``CharField`` refuses ``""``, whitespace alone and NUL characters; the
app's decimals take a JSON number or a plain decimal string, within the field's digits
and bounds; every operation has a summary.

:func:`postprocess` (a spectacular hook): served to a caller, the document leaves out
every operation that caller lacks the capability for (and the components only they
used), like every other face. An operation's input refuses unknown properties, and a
transition's also takes ``expectedVersion``. It states the uniform error model: any
operation may answer a problem document (``application/problem+json``) with the
statuses listed in ``ERROR_STATUSES``; HAL and HAL-FORMS bodies are described as such,
not as the JSON representation. It names the server it is served from and states
``security: []`` on operations that take no credentials.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.urls import NoReverseMatch, get_script_prefix, reverse
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import serializers

from affordances import routes
from affordances.catalog import get_catalog
from affordances.constraints import narrow_property
from affordances.encoding import canonical_json
from affordances.entries import create_constraints
from affordances.execution import VERSION_STRING
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.operations import Kind
from affordances.problems import PROBLEM_CONTENT_TYPE, PROBLEM_SCHEMA
from affordances.protocol import PROTOCOL_VERSION, SCHEMA_NAMES
from affordances.rest import paging
from affordances.rest.documentation import list_parameters, page_serializer
from affordances.rest.renderers import HAL_MEDIA_TYPE
from affordances.schemas import add_text_rules, decimal_schema, from_openapi

__all__ = ["ERROR_STATUSES", "AutoSchema", "caller_key", "postprocess"]


class AutoSchema(SpectacularAutoSchema):
    """``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``; the app's own views use it anyway."""

    _direction = "response"

    def _map_basic_serializer(self, serializer: Any, direction: str) -> Any:
        outer, self._direction = self._direction, direction
        try:
            return super()._map_basic_serializer(serializer, direction)  # type: ignore[no-untyped-call]
        finally:
            self._direction = outer

    def _map_serializer_field(
        self, field: Any, direction: str, bypass_extensions: bool = False
    ) -> Any:
        schema = super()._map_serializer_field(  # type: ignore[no-untyped-call]
            field, direction, bypass_extensions
        )
        if (
            direction == "request"
            and self._runs_operations()
            and isinstance(field, serializers.DecimalField)
            and isinstance(schema, dict)
            and schema.get("type") == "string"
        ):
            return _decimal_request(field, schema)
        return schema

    def _runs_operations(self) -> bool:
        """An app view: its inputs go through ``validate_arguments`` (plain decimals only);
        DRF alone also takes ``"1e2"`` or ``" 12 "``, which spectacular's mapping allows."""
        from affordances.rest.exceptions import PROBLEM_DOCUMENTS_ATTRIBUTE  # (a cycle)

        return bool(getattr(self.view, PROBLEM_DOCUMENTS_ATTRIBUTE, False))

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

    def _transition_name(self) -> str | None:
        return getattr(self.view, "transition_name", None)

    def _operation(self) -> Any:
        """The operation this endpoint runs: the collection's create, or the transition
        of a transition route (None while it is switched off)."""
        name = self._transition_name()
        if name is None:
            return self._create()
        model: Any = getattr(self.view, "model", None)
        return get_catalog().transition(model, name)

    def is_excluded(self) -> bool:
        # A transition route whose operation is not in the catalog (switched off when the
        # document is made): not in the document either.
        if self._transition_name() is not None and self._operation() is None:
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
        if operation is not None and self._transition_name() is not None:
            from affordances.rest.views import ProblemSerializer  # (a cycle)

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
        return parameters

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


def _resource_of(view: Any) -> Any:
    model = getattr(view, "model", None)
    return get_catalog().resource_for(model) if model is not None else None


def _decimal_request(field: serializers.DecimalField, mapped: dict[str, Any]) -> dict[str, Any]:
    """The decimal rule's one schema (:func:`affordances.schemas.decimal_schema`): a JSON
    number or a plain decimal string, each within the field's digits and bounds."""
    schema: dict[str, Any] = _openapi_dialect(decimal_schema(field, mapped))
    return schema


def _openapi_dialect(node: Any) -> Any:
    """JSON Schema 2020-12 as OpenAPI 3.0 writes it: boolean exclusive bounds beside their
    bound, ``const`` as an ``enum`` of one, a ``null`` branch as ``nullable``, numbers as
    JSON numbers."""
    if isinstance(node, list):
        return [_openapi_dialect(item) for item in node]
    if isinstance(node, Decimal):
        return float(node)
    if not isinstance(node, dict):
        return node
    out = {key: _openapi_dialect(value) for key, value in node.items()}
    for exclusive, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
        value = out.get(exclusive)
        if value is not None and not isinstance(value, bool):
            out[bound], out[exclusive] = value, True
    if "const" in out:
        out["enum"] = [out.pop("const")]
    branches = out.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        out["anyOf"] = [branch for branch in branches if branch != {"type": "null"}]
        out["nullable"] = True
        if len(out["anyOf"]) == 1:
            out.update(out.pop("anyOf")[0])
    return out


ERROR_STATUSES = {
    "400": "Malformed request or invalid arguments (malformed_request, validation_error).",
    "401": "Not authenticated.",
    "404": "Not found — also what an object or operation you may not see looks like.",
    "405": "Method not allowed.",
    "406": "Not acceptable.",
    "409": "Not available now, or an idempotency key in use.",
    "412": "Stale version.",
    "415": "Unsupported media type.",
    "422": "Idempotency key reused.",
    "429": "Too many requests.",
}
_HAL_BODIES = {
    HAL_FORMS_MEDIA_TYPE: {
        "type": "object",
        "description": "HAL-FORMS: `_links`, `_templates`, `_embedded`.",
    },
    HAL_MEDIA_TYPE: {"type": "object", "description": "HAL: `_links`, `_embedded`."},
}
_METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}


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
                _complete_responses(operation)
                _strict_inputs(operation, schemas, user)
                # Explicit: the token endpoints take no credentials (Redocly: security-defined).
                operation.setdefault("security", [])
    schemas["Problem"] = PROBLEM_SCHEMA
    if request is not None and not result.get("servers"):
        result["servers"] = [{"url": _server_root(request)}]
    protocol_schemas = _protocol_schema_urls(request)
    if protocol_schemas:
        # An extension, not a $ref: a 2020-12 schema is no OpenAPI 3.0 Schema Object.
        result["x-affordances-protocol"] = {
            "version": PROTOCOL_VERSION,
            "schemas": protocol_schemas,
        }
    _prune_components(result)
    return result


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


_EXPECTED_VERSION = {
    "description": "The version you acted on (the affordance's validForVersion); a stale "
    "one is refused with 412 stale_version. Or send it as If-Match.",
    "oneOf": [
        {"type": "integer", "minimum": 1, "maximum": 2**63 - 1},
        {"type": "string", "pattern": f"^{VERSION_STRING}$"},
    ],
}


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
        if found.kind == Kind.TRANSITION:
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
        schema["properties"][name] = _openapi_dialect(narrow_property(base, narrowed))


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


def _complete_responses(operation: dict[str, Any]) -> None:
    responses = operation.setdefault("responses", {})
    problem = {PROBLEM_CONTENT_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for status, response in responses.items():
        content = response.get("content")
        if status.startswith("2") and content:
            for media_type, body in _HAL_BODIES.items():
                if media_type in content:
                    content[media_type] = {"schema": body}
        elif not status.startswith("2"):
            # Errors are problem documents, whatever the Accept header asked for.
            response["content"] = problem
    for status, description in ERROR_STATUSES.items():
        responses.setdefault(status, {"description": description, "content": problem})


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
        for ref in _refs(schemas.get(name, {})) - reachable:
            reachable.add(ref)
            pending.append(ref)
    for name in list(schemas):
        if name not in reachable:
            del schemas[name]
