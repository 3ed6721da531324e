"""The REST face of a registered model: small viewset mixins over the one read path.

A viewset names its ``model``; everything else — the visible objects, the serializer,
filters, ordering and paging — comes from the model's registration in
``AFFORDANCES["MODELS"]``, so REST lists exactly what MCP lists and ``perform`` may act
on. Compose the mixins as DRF's own (``ResourceViewSet`` has them all).

What a caller may see is decided once, by the registration's ``QUERYSET`` (a function of
the user and the request), for every route and face. A view does not narrow it: an
override of ``get_queryset``, ``get_object`` or ``filter_queryset`` is refused by the
system check ``affordances.E032`` (it would hide an object from some routes only).
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.validators import RegexValidator
from django.db import models
from django.http import Http404, QueryDict
from rest_framework import exceptions, serializers, viewsets
from rest_framework.metadata import BaseMetadata, SimpleMetadata
from rest_framework.pagination import BasePagination
from rest_framework.request import Request, clone_request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from affordances import reads, routes, tracing
from affordances.arguments import NoArguments
from affordances.catalog import get_catalog
from affordances.constraints import conjoined_pattern
from affordances.edits import editable_now
from affordances.encoding import jsonable
from affordances.entries import shaped
from affordances.execution import Outcome, may_create, perform, perform_create
from affordances.models import interface_of
from affordances.operations import Operation
from affordances.problems import Problem
from affordances.resources import Resource
from affordances.rest import offered_inputs, paging
from affordances.rest.base import ProblemResponsesMixin, caller
from affordances.rest.documentation import PAGE_PARAM, PAGE_SIZE_PARAM
from affordances.rest.serializers import affordance_shape
from affordances.rest.views import vary_private

__all__ = [
    "CreateResourceMixin",
    "EditResourceMixin",
    "ListResourceMixin",
    "ResourceMixin",
    "ResourceViewSet",
    "RetrieveResourceMixin",
    "TransitionActionsMixin",
]

_IF_MATCH = re.compile(r'^\s*"(\d{1,19})"\s*$')
# Query parameters of a list that are not filters.
_NOT_FILTERS = {PAGE_PARAM, PAGE_SIZE_PARAM, "format", "affordances"}


def _caller(request: Request) -> Any:
    """The authenticated user, or None when authentication fails (no exception here)."""
    try:
        return caller(request)
    except exceptions.APIException:
        return None


def _body(request: Request) -> dict[str, Any]:
    data = request.data  # the app's parsers refuse what is not a bounded JSON or form
    if isinstance(data, QueryDict):
        # A form post (browsable API): single values, without the CSRF token.
        return {k: v for k, v in data.items() if k != "csrfmiddlewaretoken" and v != ""}
    if not isinstance(data, dict):
        raise Problem.malformed("The request body must be a JSON object.")
    return data


def _if_match(request: Request) -> int | None:
    header = request.headers.get("If-Match")
    if header is None or header.strip() == "*":
        return None
    match = _IF_MATCH.match(header)
    if match is None:
        raise Problem.malformed('If-Match must be a quoted version, like "3", or *.')
    return int(match.group(1))


def _preview(request: Request) -> bool:
    """``?preview=true`` on a transition route (docs/protocol.md#previews): a query
    parameter, not a ``Prefer`` preference — a server may ignore a preference (RFC 7240),
    and a preview ignored on the way is an operation run for real."""
    value = request.query_params.get("preview")
    if value is None:
        return False
    if value in _PREVIEW_VALUES:
        return _PREVIEW_VALUES[value]
    raise Problem.validation({"preview": ["Must be true or false (or absent)."]})


_PREVIEW_VALUES = {"true": True, "1": True, "false": False, "0": False}


def _answer(request: Request, outcome: Outcome) -> Response:
    body = shaped(outcome.body, affordance_shape(request))
    response = Response(body, status=outcome.status)
    version = outcome.body.get("version")
    if version is not None:
        response["ETag"] = f'"{version}"'
    if outcome.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


class ResourceMetadata(SimpleMetadata):
    """OPTIONS: describes what POST (PATCH) on this route takes from this caller — the
    collection's create input to a caller who may create, a transition route's own input
    to a caller who may use it on this object now, an object's edit input (PATCH) to a
    caller who may edit it now, each narrowed by its constraints — and nothing to
    anyone else (DRF's own metadata for views that are not resource views)."""

    def determine_actions(self, request: Request, view: Any) -> dict[str, Any]:
        offered = getattr(view, "offered_input", None)
        if offered is None:
            return super().determine_actions(request, view)
        actions = {}
        for method in {"PUT", "POST", "PATCH"} & set(view.allowed_methods):
            view.request = clone_request(request, method)
            try:
                view.check_permissions(view.request)
                serializer = offered(method)
            except (exceptions.APIException, Problem, Http404, PermissionDenied):
                serializer = None
            finally:
                view.request = request
            if serializer is not None:
                actions[method] = self.get_serializer_info(serializer)
        return actions

    def get_field_info(self, field: serializers.Field[Any, Any, Any, Any]) -> dict[str, Any]:
        """DRF's description of a field, plus the ``pattern`` its regex validators (its
        own, a constraint's) hold together: what a string must match."""
        info: dict[str, Any] = super().get_field_info(field)
        patterns = [
            re.compile(validator.regex).pattern
            for validator in field.validators
            if isinstance(validator, RegexValidator) and not validator.inverse_match
        ]
        pattern = conjoined_pattern(patterns)
        if pattern is not None:
            info["pattern"] = pattern
        return info


class ResourceMixin(ProblemResponsesMixin):
    """The registration of ``model`` as the view's queryset, serializer and lookup."""

    metadata_class: str | type[BaseMetadata] | None = ResourceMetadata

    model: type[models.Model]
    # Any id reaches the view, so a malformed one is the core's not_found (a problem
    # document), not an unmatched URL.
    lookup_value_regex = "[^/]+"

    request: Request
    kwargs: dict[str, Any]

    @property
    def resource(self) -> Resource:
        return get_catalog().registered(self.model)

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        # The caller's trace (the traceparent/tracestate headers), continued once per
        # request: the runs and evaluations of the core are its spans (affordances.tracing).
        with tracing.continued(headers=request.headers):
            return super().dispatch(request, *args, **kwargs)  # type: ignore[misc]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        # ?affordances= shapes every answer of these routes: a value it does not know is
        # refused before anything is read or run — not only once an object is written
        # (an empty page would take it, a transition would run and then be refused).
        affordance_shape(request)

    def get_queryset(self) -> models.QuerySet[Any]:
        """The registration's ``QUERYSET`` for this request — what every route of the view
        (and every other face) reads. Not to be overridden (``affordances.E032``): narrow
        in the registration's function, which is given the user and the request."""
        return reads.visible(self.resource, self.request.user, request=self.request)

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        return self._representation_class()

    def _representation_class(self) -> type[serializers.BaseSerializer[Any]]:
        serializer_class = self.resource.serializer_class
        if serializer_class is None:
            raise LookupError(f"{self.model._meta.label} has no SERIALIZER in AFFORDANCES.")
        return serializer_class

    def get_object(self) -> Any:
        lookup = self.kwargs.get("pk")
        instance = reads.one(self.get_queryset(), self.resource.parse_pk(lookup))
        if instance is None:
            raise Problem.not_found()
        self.check_object_permissions(self.request, instance)  # type: ignore[attr-defined]
        return instance

    def offered_input(self, method: str) -> serializers.Serializer[Any] | None:
        """What ``method`` on this route takes from this request's caller, narrowed by the
        constraints that apply now; None: nothing to offer. OPTIONS and the browsable API
        describe this and nothing else (see the create and transition mixins)."""
        return None

    def represent(self, instance: Any) -> dict[str, Any]:
        """The resource representation of ``instance`` for this request's caller."""
        # Whatever the action's input serializer is, the answer is the resource itself.
        # With its affordances whatever ?affordances says: this is also the body an
        # idempotent replay answers, on any face (each face shapes it, see _answer).
        context = {**self.get_serializer_context(), "affordances": True}  # type: ignore[attr-defined]
        data: dict[str, Any] = jsonable(
            self._representation_class()(instance, context=context).data
        )
        return data

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        return vary_private(response)


class ListResourceMixin:
    """``GET`` the collection: one page of what the caller may see (the one read path).

    Paged by the view's DRF ``pagination_class`` when it has one, in that paginator's
    shape; else the app's own page (``page``, ``page_size``), as MCP's list tools page.
    The view's ``SearchFilter`` and ``OrderingFilter`` narrow and order what the
    registration's ``FILTERSET`` left (:mod:`affordances.rest.paging`).
    """

    model: type[models.Model]

    @property
    def paginator(self) -> BasePagination | None:
        """DRF's paginator of this view (its ``pagination_class``), bounded by the
        registration; None when there is none the list can drive."""
        if "_paginator" not in self.__dict__:
            self._paginator = paging.paginator_for(self, self.resource)  # type: ignore[attr-defined]
        return self._paginator

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        resource: Resource = self.resource  # type: ignore[attr-defined]
        params = request.query_params
        paginator = self.paginator
        backends = paging.applied_backends(self)
        not_filters = _NOT_FILTERS | paging.paging_parameters(paginator)
        filters = {k: v for k, v in params.items() if k not in not_filters}

        def narrow(queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
            return paging.narrow(queryset, request, self, resource, backends)

        if paginator is not None:
            queryset = narrow(reads.filtered(resource, request.user, filters, request=request))
            objects = paging.paginate(paginator, queryset, request, self)
            if objects is not None:
                data = self.get_serializer(objects, many=True).data  # type: ignore[attr-defined]
                return paginator.get_paginated_response(data)
        page = reads.list_page(
            resource,
            request.user,
            filters=filters,
            page=params.get(PAGE_PARAM, 1),
            size=params.get(PAGE_SIZE_PARAM),
            page_argument=PAGE_PARAM,
            size_argument=PAGE_SIZE_PARAM,
            request=request,
            narrow=narrow if backends else None,
        )
        serializer = self.get_serializer(page.objects, many=True)  # type: ignore[attr-defined]
        url = request.build_absolute_uri()
        following = replace_query_param(url, PAGE_PARAM, page.number + 1) if page.has_next else None
        previous = None
        if page.has_previous:
            previous = (
                remove_query_param(url, PAGE_PARAM)
                if page.number == 2
                else replace_query_param(url, PAGE_PARAM, page.number - 1)
            )
        return Response(
            {
                "count": page.count,
                "next": following,
                "previous": previous,
                "results": serializer.data,
            }
        )


class RetrieveResourceMixin:
    """``GET`` one object, with its version as a strong ``ETag``."""

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        instance = self.get_object()  # type: ignore[attr-defined]
        data = self.get_serializer(instance).data  # type: ignore[attr-defined]
        response = Response(data)
        version = data.get("version") if isinstance(data, dict) else None
        if version is not None:
            response["ETag"] = f'"{version}"'
        return response


class CreateResourceMixin:
    """``POST`` the collection: the model's ``@creates`` operation, through ``perform_create``.

    A caller who may not create — or a model with nothing to create — gets the core's
    answer for both, 405 without ``POST`` in ``Allow``, so the capability does not show.
    """

    request: Any
    model: type[models.Model]

    def _create_operation(self) -> Operation | None:
        return get_catalog().create_for(self.model)

    def _may_create(self) -> bool:
        operation = self._create_operation()
        return operation is not None and operation.permits(_caller(self.request))

    def _on_collection(self) -> bool:
        """This request came by the collection's route (the one POST creates on)."""
        return "create" in (getattr(self, "action_map", None) or {}).values()

    def get_serializer_class(self) -> Any:
        # POST on the collection (also DRF's OPTIONS and browsable forms, which describe it
        # with a cloned POST request): the create input, to a caller who may create.
        if self._on_collection() and getattr(self.request, "method", None) == "POST":
            if not self._may_create():
                return NoArguments
            operation = self._create_operation()
            assert operation is not None
            return operation.input_serializer or NoArguments
        return super().get_serializer_class()  # type: ignore[misc]

    def offered_input(self, method: str) -> serializers.Serializer[Any] | None:
        if not self._on_collection():
            return super().offered_input(method)  # type: ignore[misc, no-any-return]
        if method != "POST":
            return None
        request = self.request
        return offered_inputs.offered_input(
            self._create_operation(), None, _caller(request), request
        )

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        operation = self._create_operation()
        may_create(operation, request.user)  # before the body is read
        assert operation is not None
        outcome = perform_create(
            operation=operation,
            user=request.user,
            arguments=_body(request),
            via=interface_of(request.META),
            represent=self.represent,  # type: ignore[attr-defined]
            idempotency_key=request.headers.get("Idempotency-Key"),
            request=request,
        )
        response = _answer(request, outcome)
        if outcome.body.get("url"):
            response["Location"] = outcome.body["url"]
        return response

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        collection = response.has_header("Allow") and self._on_collection()
        # The collection's Allow, once the caller is known: POST only for creators.
        if collection and not self._may_create():
            methods = [m.strip() for m in response["Allow"].split(",")]
            response["Allow"] = ", ".join(m for m in methods if m != "POST")
        return response


class TransitionActionsMixin:
    """``POST {detail}/{transition}/`` for every transition of the model.

    One handler, :meth:`transition`, serves them all: :class:`ResourceRouter` adds a
    route per transition of the registration (named ``{basename}-{method_name}`` in the
    app's namespace, so affordance targets reverse them), each telling the handler its
    transition (``transition_name``); nothing is added to the class. The URL path is the
    method name unless ``transition_url_paths`` maps it to another: clients that follow
    affordances never notice. A route of an operation the caller may not use answers
    exactly as a URL that does not exist.
    """

    transition_url_paths: dict[str, str] = {}
    # The transition this view serves (the route's initkwargs); None on other routes.
    transition_name: str | None = None
    model: type[models.Model]

    def transition(self, request: Request, pk: Any = None, **kwargs: Any) -> Response:
        # kwargs: what the patterns above the app's routes capture (a version in the path).
        assert self.transition_name is not None
        return self.perform_transition(request, pk, self.transition_name)

    def _route_operation(self) -> tuple[str | None, Operation | None]:
        # The route's transition, whatever the method asked (GET on a POST route too).
        method_name = self.transition_name
        if method_name is None:
            return None, None
        return method_name, get_catalog().transition(self.model, method_name)

    def _usable_route_operation(self) -> tuple[str | None, Operation | None]:
        """The route's transition, and its operation if this request's caller may use it."""
        method_name, operation = self._route_operation()
        if operation is not None:
            user = _caller(self.request)  # type: ignore[attr-defined]
            operation = get_catalog().resolve(
                operation.name, user, model=self.model, transition=True
            )
        return method_name, operation

    def get_serializer_class(self) -> Any:
        # A transition route takes — and OPTIONS and the browsable API describe — its own
        # operation's input: never the collection's create input nor the representation.
        method_name, operation = self._usable_route_operation()
        if method_name is None:
            return super().get_serializer_class()  # type: ignore[misc]
        return (operation.input_serializer if operation else None) or NoArguments

    def offered_input(self, method: str) -> serializers.Serializer[Any] | None:
        method_name, operation = self._usable_route_operation()
        if method_name is None:
            return super().offered_input(method)  # type: ignore[misc, no-any-return]
        if method != "POST" or operation is None:
            return None
        try:
            # The object as POST would find it: one the caller may not see offers nothing,
            # exactly as one that does not exist.
            instance = self.get_object()  # type: ignore[attr-defined]
        except (Problem, Http404, exceptions.APIException):
            return None
        request = self.request  # type: ignore[attr-defined]
        return offered_inputs.offered_input(operation, instance, _caller(request), request)

    def is_hidden_route(self, request: Request) -> bool:
        # Asked before content negotiation, permissions and throttles: none of their
        # answers (406, 403, 429…) may tell a route the caller cannot use from a missing one.
        method_name, operation = self._route_operation()
        return method_name is not None and (
            operation is None or not operation.permits(_caller(request))
        )

    def get_view_name(self) -> str:
        # A transition route is named for its operation ("Cancel order"): the browsable
        # API's title and breadcrumb, OPTIONS's name. Only a caller who may use it gets
        # this far (a hidden route answers 404 first).
        _, operation = self._route_operation()
        if operation is not None:
            return str(operation.title)
        return super().get_view_name()  # type: ignore[misc, no-any-return]

    def get_extra_action_url_map(self) -> dict[str, str]:
        """The browsable API's "Extra Actions" menu: the view's own actions and, on an
        object, the routes of the caller's operations by their titles (none it may not
        know about)."""
        urls: dict[str, str] = dict(super().get_extra_action_url_map())  # type: ignore[misc]
        if not getattr(self, "detail", False):
            return urls
        user = _caller(self.request)  # type: ignore[attr-defined]
        pk = self.kwargs.get("pk")  # type: ignore[attr-defined]
        # By method name, as DRF lists a viewset's own actions.
        operations = sorted(
            get_catalog().transitions_for(self.model), key=lambda op: str(op.method_name)
        )
        for operation in operations:
            if operation.permits(user):
                path = routes.operation_path(operation, pk)
                if path is not None:
                    label = str(operation.title)
                    if label in urls:  # two operations with one title: tell them apart
                        label = f"{label} ({operation.name})"
                    urls[label] = self.request.build_absolute_uri(path)  # type: ignore[attr-defined]
        return urls

    def perform_transition(self, request: Request, pk: Any, method_name: str) -> Response:
        operation = get_catalog().transition(self.model, method_name)
        if operation is None:
            raise Problem.not_found()
        outcome = perform(
            operation=operation,
            pk=pk,
            user=request.user,
            arguments=_body(request),
            via=interface_of(request.META),
            represent=self.represent,  # type: ignore[attr-defined]
            expected_version=_if_match(request),
            idempotency_key=request.headers.get("Idempotency-Key"),
            request=request,
            preview=_preview(request),
        )
        return _answer(request, outcome)


class EditResourceMixin:
    """``PATCH`` one object: the registration's ``edit_{resource}`` (its
    ``EDITABLE_FIELDS``), through ``perform`` as every operation runs — the version
    (``expectedVersion`` or ``If-Match``), the ``Idempotency-Key``, ``?preview=true``.

    A caller who may not edit — or a model that takes no edits — gets DRF's own answer
    for a method the route does not take, 405 without ``PATCH`` in ``Allow``, exactly as
    on a resource that declares no ``EDITABLE_FIELDS``: the capability does not show.
    """

    request: Any
    model: type[models.Model]

    def _edit_operation(self) -> Operation | None:
        return get_catalog().edit_for(self.model)

    def _may_edit(self) -> bool:
        operation = self._edit_operation()
        return operation is not None and operation.permits(_caller(self.request))

    def _may_edit_here(self) -> bool:
        """Whether the caller may edit the object this route names: model-wide, or — where
        an object backend answers per object — on this object, as its affordances say
        (:func:`affordances.edits.editable_now`; a hidden or missing one: no)."""
        operation = self._edit_operation()
        user = _caller(self.request)
        if operation is None or user is None:
            return False
        holding = operation.holding(user)
        if holding.everywhere or not holding.anywhere:
            return holding.everywhere
        try:
            instance = self.get_object()  # type: ignore[attr-defined]
        except (Problem, Http404, exceptions.APIException):
            return False
        return editable_now(operation, instance, user, holding=holding) is not None

    def _on_detail(self) -> bool:
        """This request came by the object's route (the one PATCH edits on)."""
        return "partial_update" in (getattr(self, "action_map", None) or {}).values()

    def get_serializer_class(self) -> Any:
        # PATCH on the object (DRF's OPTIONS and browsable forms describe it with a cloned
        # PATCH request): the edit's input, to a caller who may edit.
        if self._on_detail() and getattr(self.request, "method", None) == "PATCH":
            operation = self._edit_operation()
            if operation is None or not self._may_edit():
                return NoArguments
            return operation.input_serializer or NoArguments
        return super().get_serializer_class()  # type: ignore[misc]

    def offered_input(self, method: str) -> serializers.Serializer[Any] | None:
        if method != "PATCH" or not self._on_detail():
            return super().offered_input(method)  # type: ignore[misc, no-any-return]
        operation = self._edit_operation()
        if operation is None:
            return None
        try:
            # The object as PATCH would find it: hidden is the same as missing.
            instance = self.get_object()  # type: ignore[attr-defined]
        except (Problem, Http404, exceptions.APIException):
            return None
        request = self.request
        return offered_inputs.offered_input(operation, instance, _caller(request), request)

    def partial_update(self, request: Request, pk: Any = None, **kwargs: Any) -> Response:
        # kwargs: what the patterns above the app's routes capture (a version in the path).
        operation = self._edit_operation()
        if operation is None or not operation.permits(request.user):
            # Before the body is read: as a route that takes no PATCH answers.
            raise exceptions.MethodNotAllowed(str(request.method))
        outcome = perform(
            operation=operation,
            pk=pk,
            user=request.user,
            arguments=_body(request),
            via=interface_of(request.META),
            represent=self.represent,  # type: ignore[attr-defined]
            expected_version=_if_match(request),
            idempotency_key=request.headers.get("Idempotency-Key"),
            request=request,
            preview=_preview(request),
        )
        return _answer(request, outcome)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        # The object's Allow, once the caller is known: PATCH only for editors of it.
        if response.has_header("Allow") and self._on_detail() and not self._may_edit_here():
            methods = [m.strip() for m in response["Allow"].split(",")]
            response["Allow"] = ", ".join(m for m in methods if m != "PATCH")
        return response


class ResourceViewSet(
    CreateResourceMixin,
    TransitionActionsMixin,
    EditResourceMixin,
    ListResourceMixin,
    RetrieveResourceMixin,
    ResourceMixin,
    viewsets.GenericViewSet,  # type: ignore[type-arg]
):
    """A registered model on the REST face: list, detail, create, every transition and
    the edit (``PATCH``, where the registration declares ``EDITABLE_FIELDS``).

    Subclass it with ``model = YourModel``; register it with :class:`ResourceRouter`
    (it makes the transition routes, in the app's URL namespace).
    """
