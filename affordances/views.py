"""The REST face: the catalog endpoints and the action routes generated from it."""

from __future__ import annotations

import re
from typing import Any

from django.http import QueryDict
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from affordances.catalog import get_catalog
from affordances.encoding import jsonable
from affordances.execution import perform, perform_create
from affordances.models import Interface
from affordances.operations import Operation, transition_method_names
from affordances.problems import Problem

__all__ = ["EntryPointView", "OperationDetailView", "OperationListView", "TransitionActionsMixin"]

_IF_MATCH = re.compile(r'^\s*"(\d{1,19})"\s*$')


class NoArguments(serializers.Serializer):
    """An operation that takes no arguments besides the object it acts on."""


def _vary_private(response: Response) -> Response:
    # The body depends on who asks: shared caches must not serve it to someone else.
    patch_vary_headers(response, ["Authorization", "Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return response


class ProblemSerializer(serializers.Serializer):
    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()
    reason = serializers.CharField(required=False)
    errors = serializers.DictField(required=False)
    current = serializers.DictField(required=False)


class EntryPointView(APIView):
    """``GET /api/``: links to every registered collection and to the catalog."""

    @extend_schema(
        operation_id="entry_point", responses={200: OpenApiResponse(description="Links.")}
    )
    def get(self, request: Request) -> Response:
        links: dict[str, Any] = {"self": {"href": request.build_absolute_uri()}}
        for resource in get_catalog().resources:
            try:
                path = reverse(f"{resource.basename}-list")
            except NoReverseMatch:
                continue
            links[resource.plural] = {"href": request.build_absolute_uri(path)}
        links["operations"] = {"href": request.build_absolute_uri(reverse("operation-list"))}
        return _vary_private(Response({"_links": links}))


class OperationListView(APIView):
    """The caller's operation catalog (SPEC §4): stable, cacheable, deterministic."""

    @extend_schema(
        operation_id="operations_list",
        responses={200: OpenApiResponse(description="The operation catalog.")},
    )
    def get(self, request: Request) -> Response:
        catalog = get_catalog()
        operations = catalog.for_user(request.user)
        etag = catalog.etag(operations)
        if _matches(request.headers.get("If-None-Match", ""), etag):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response({"operations": [catalog.documents[op.name] for op in operations]})
        response["ETag"] = etag
        return _vary_private(response)


class OperationDetailView(APIView):
    """One catalog entry, by name or URN; unknown and not permitted look the same."""

    @extend_schema(
        operation_id="operations_retrieve",
        responses={
            200: OpenApiResponse(description="One operation."),
            404: ProblemSerializer,
        },
    )
    def get(self, request: Request, ident: str) -> Response:
        catalog = get_catalog()
        operation = catalog.lookup(ident)
        if operation is None or not operation.permits(request.user):
            raise Problem.not_found()
        etag = catalog.etag([operation])
        if _matches(request.headers.get("If-None-Match", ""), etag):
            response = Response(status=status.HTTP_304_NOT_MODIFIED)
        else:
            response = Response(catalog.documents[operation.name])
        response["ETag"] = etag
        return _vary_private(response)


def _matches(header: str, etag: str) -> bool:
    """If-None-Match: a list of (weak-compared) tags, or * for any representation."""
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}
    return "*" in tags or etag in tags


VIA_ENVIRON_KEY = "affordances.via"


def _via(request: Request) -> str:
    """``api``, unless the MCP forms interface relayed the request (a WSGI environ key,
    which no HTTP client can set)."""
    via = request._request.META.get(VIA_ENVIRON_KEY)
    return via if via in Interface.values else Interface.API


def _if_match(request: Request) -> int | None:
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return None
    match = _IF_MATCH.match(header)
    if match is None:
        raise Problem.malformed('If-Match must be a quoted version, like "3", or *.')
    return int(match.group(1))


def _body(request: Request) -> dict[str, Any]:
    try:
        data = request.data  # DRF raises ParseError (→ malformed_request) on bad JSON
    except RecursionError:
        # json refuses nesting deeper than the interpreter's recursion limit.
        raise Problem.malformed("The request body is nested too deeply.") from None
    if isinstance(data, QueryDict):
        # A form post (browsable API): single values, without the CSRF token.
        return {k: v for k, v in data.items() if k != "csrfmiddlewaretoken" and v != ""}
    if not isinstance(data, dict):
        raise Problem.malformed("The request body must be a JSON object.")
    return data


class TransitionActionsMixin:
    """Add to a viewset of a registered model: ``POST {detail}/{transition}/`` per operation.

    The routes are generated from the catalog when the viewset class is created, named
    ``{basename}-{method_name}`` so affordance targets can reverse them. The URL path is
    the method name unless ``transition_url_paths`` maps it to another: clients that
    follow affordances never notice.
    """

    transition_url_paths: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        queryset = getattr(cls, "queryset", None)
        if queryset is None:
            return
        catalog = get_catalog()
        resource = catalog.resource_for(queryset.model)
        if resource is None:
            return
        creator = catalog.create_for(queryset.model)
        if creator is not None and "create" not in cls.__dict__:
            cls.create = _documented_create(creator)  # type: ignore[method-assign]
        # Every declared transition gets its route, also one switched off by its setting
        # now (``enabled_by``): while it is off, the route answers not_found.
        for method_name in transition_method_names(resource):
            attribute = f"transition_{method_name}"
            if attribute not in cls.__dict__:
                url_path = cls.transition_url_paths.get(method_name, method_name)
                operation = catalog.transition(queryset.model, method_name)
                setattr(cls, attribute, _make_action(operation, method_name, url_path))

    def get_extra_action_url_map(self) -> dict[str, str]:
        """The browsable API's "Extra Actions" menu, without the caller's unknown operations.

        DRF lists every extra action; a transition the caller lacks the capability for
        (or one switched off now) must not show up there either.
        """
        urls = super().get_extra_action_url_map()  # type: ignore[misc]
        model = self.queryset.model  # type: ignore[attr-defined]
        catalog = get_catalog()
        resource = catalog.resource_for(model)
        if resource is None:
            return urls
        user = getattr(getattr(self, "request", None), "user", None)
        known = {op.method_name for op in catalog.transitions_for(model) if op.permits(user)}
        transitions = set(transition_method_names(resource))
        hidden = {
            self.__class__(**extra.kwargs).get_view_name()
            for extra in self.get_extra_actions()  # type: ignore[attr-defined]
            if extra.url_name in transitions and extra.url_name not in known
        }
        return {label: url for label, url in urls.items() if label not in hidden}

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        # An action URL of an operation the caller may not use is not there for them,
        # whatever the method (GET → 405 or OPTIONS → its description would tell).
        actions = getattr(self, "action_map", None) or {}
        names = [n for n in actions.values() if n.startswith("transition_")]
        if names:
            method_name = names[0].removeprefix("transition_")
            model = self.queryset.model  # type: ignore[attr-defined]
            operation = get_catalog().transition(model, method_name)
            if operation is None or not operation.permits(request.user):
                raise Problem.not_found()

    def _perform_transition(self, request: Request, pk: Any, method_name: str) -> Response:
        operation = get_catalog().transition(self.queryset.model, method_name)  # type: ignore[attr-defined]
        if operation is None:
            raise Problem.not_found()
        outcome = perform(
            operation=operation,
            pk=pk,
            user=request.user,
            arguments=_body(request),
            via=_via(request),
            represent=self._represent,
            expected_version=_if_match(request),
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        response = Response(outcome.body, status=outcome.status)
        version = outcome.body.get("version")
        if version is not None:
            response["ETag"] = f'"{version}"'
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return _vary_private(response)

    @property
    def allowed_methods(self) -> list[str]:
        # Allow must not advertise POST to a caller who may not create (no leak).
        methods = super().allowed_methods  # type: ignore[misc]
        if "POST" in methods and not self._may_create():
            methods = [method for method in methods if method != "POST"]
        return methods

    def _create_operation(self) -> Operation | None:
        return get_catalog().create_for(self.queryset.model)  # type: ignore[attr-defined]

    def _may_create(self) -> bool:
        operation = self._create_operation()
        request = getattr(self, "request", None)
        # DRF computes headers before authenticating; don't authenticate from here.
        if operation is None or request is None or not hasattr(request, "_user"):
            return False
        return operation.permits(request.user)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        if response.has_header("Allow"):
            # Now that the caller is known, say which methods it may use.
            response["Allow"] = ", ".join(self.allowed_methods)
        return response

    def get_serializer_class(self) -> Any:
        operation = self._create_operation()
        # "metadata" is DRF's OPTIONS, which describes POST with a cloned POST request.
        action = getattr(self, "action", None)
        method = getattr(getattr(self, "request", None), "method", None)
        if operation is not None and action in ("create", "metadata") and method == "POST":
            return operation.input_serializer or NoArguments
        return super().get_serializer_class()  # type: ignore[misc]

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Run the model's collection operation (``kind: create``) through the execution path."""
        operation = self._create_operation()
        if operation is None or not operation.permits(request.user):
            # As if the collection took no POST at all, exactly as for a read-only one.
            raise exceptions.MethodNotAllowed(request.method)
        outcome = perform_create(
            operation=operation,
            user=request.user,
            arguments=_body(request),
            via=_via(request),
            represent=self._represent,
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        response = Response(outcome.body, status=outcome.status)
        if outcome.body.get("url"):
            response["Location"] = outcome.body["url"]
        if outcome.body.get("version") is not None:
            response["ETag"] = f'"{outcome.body["version"]}"'
        if outcome.replayed:
            response["Idempotent-Replayed"] = "true"
        return _vary_private(response)

    def _represent(self, instance: Any) -> dict[str, Any]:
        # The action's serializer_class is its input; the answer is the resource itself.
        resource = get_catalog().resource_for(type(instance))
        serializer_class = resource.serializer_class if resource else None
        if serializer_class is None:
            return {"id": instance.pk}
        context = self.get_serializer_context()  # type: ignore[attr-defined]
        return jsonable(serializer_class(instance, context=context).data)

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().retrieve(request, *args, **kwargs)  # type: ignore[misc]
        version = response.data.get("version") if isinstance(response.data, dict) else None
        if version is not None:
            response["ETag"] = f'"{version}"'
        return _vary_private(response)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return _vary_private(super().list(request, *args, **kwargs))  # type: ignore[misc]


def _documented_create(operation: Operation) -> Any:
    """``create`` for one model, documented as its collection operation."""

    def create(self: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        return TransitionActionsMixin.create(self, request, *args, **kwargs)

    return extend_schema(
        operation_id=operation.name,
        summary=operation.title,
        description=operation.description,
        request=operation.input_serializer,
        responses={201: operation.resource.serializer_class},
    )(create)


def _make_action(operation: Operation | None, method_name: str, url_path: str) -> Any:
    """The action of one transition; ``operation`` is None while it is switched off."""
    problems = {code: ProblemSerializer for code in (400, 404, 409, 412, 422)}

    def handler(self: Any, request: Request, pk: Any = None) -> Response:
        return self._perform_transition(request, pk, method_name)

    handler.__name__ = f"transition_{method_name}"
    handler.__doc__ = operation.description if operation is not None else None
    handler = action(
        detail=True,
        methods=["post"],
        url_path=url_path,
        url_name=method_name,
        serializer_class=(operation.input_serializer if operation else None) or NoArguments,
    )(handler)
    if operation is None:
        # Not in the catalog when the URLconf was loaded: not in the OpenAPI document either.
        return extend_schema(exclude=True)(handler)
    # After @action, which replaces the function's kwargs where spectacular keeps its own.
    return extend_schema(
        operation_id=operation.name,
        summary=operation.title,
        description=operation.description,
        request=operation.input_serializer,
        responses={200: operation.resource.serializer_class, **problems},
    )(handler)
