"""The base of the app's views: every error they answer is a problem document.

Each of the app's views is built on :class:`ProblemResponsesMixin`, which answers with
:func:`problem_exception_handler` whatever the project's ``EXCEPTION_HANDLER`` is;
projects may also set it for their other views. :func:`not_found_view` is an optional
``handler404`` for URLs under the app's views that match no route.

A caller without valid credentials gets one answer on every URL of the app's views,
routes that exist and routes that don't alike (:func:`unauthenticated`, before content
negotiation, method checks or parsing): 401 rather than 404, because a client must
learn that it has to authenticate (docs/protocol.md#authentication: anonymous → 401),
and identical bytes, so the route set cannot be enumerated without an account.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured, RequestDataTooBig, TooManyFieldsSent
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.schemas.inspectors import ViewInspector
from rest_framework.views import exception_handler

from affordances.compat.drf import django_request
from affordances.problems import (
    PROBLEM_CONTENT_TYPE,
    Problem,
    ProblemCode,
    problem_type,
    title_of,
)
from affordances.rest.front_door import login_page, prefers_html
from affordances.rest.negotiation import ContentNegotiation
from affordances.rest.openapi import AutoSchema
from affordances.rest.parsers import PARSER_CLASSES, RequestTooLarge
from affordances.rest.problem_documents import PROBLEM_DOCUMENTS_ATTRIBUTE

__all__ = [
    "ProblemResponsesMixin",
    "caller",
    "is_plain",
    "not_found_response",
    "not_found_view",
    "problem_exception_handler",
    "refusal_at",
    "unauthenticated",
    "unmatched_route_view",
]

logger = logging.getLogger(__name__)


_DRF_CODES: list[tuple[type[Exception], ProblemCode]] = [
    (exceptions.NotFound, ProblemCode.NOT_FOUND),
    (Http404, ProblemCode.NOT_FOUND),
    (DjangoPermissionDenied, ProblemCode.PERMISSION_DENIED),
    (exceptions.ParseError, ProblemCode.MALFORMED_REQUEST),
    (exceptions.ValidationError, ProblemCode.VALIDATION_ERROR),
    (exceptions.NotAuthenticated, ProblemCode.NOT_AUTHENTICATED),
    (exceptions.AuthenticationFailed, ProblemCode.NOT_AUTHENTICATED),
    (exceptions.PermissionDenied, ProblemCode.PERMISSION_DENIED),
    (exceptions.MethodNotAllowed, ProblemCode.METHOD_NOT_ALLOWED),
    (exceptions.NotAcceptable, ProblemCode.NOT_ACCEPTABLE),
    (exceptions.UnsupportedMediaType, ProblemCode.UNSUPPORTED_MEDIA_TYPE),
    (exceptions.Throttled, ProblemCode.THROTTLED),
    (RequestTooLarge, ProblemCode.REQUEST_TOO_LARGE),
]


def _as_api_exception(exc: Exception) -> Exception:
    """Django's refusals of a body (raised while DRF reads it) as DRF's."""
    if isinstance(exc, RequestDataTooBig):
        return RequestTooLarge()
    if isinstance(exc, TooManyFieldsSent):
        return exceptions.ParseError("The request has too many fields.")
    return exc


def _wants_json(context: dict[str, Any]) -> bool:
    request = context.get("request")
    renderer = getattr(request, "accepted_renderer", None)
    return renderer is None or getattr(renderer, "format", "json") != "api"


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error of the API is a problem document."""
    exc = _as_api_exception(exc)
    if isinstance(exc, ImproperlyConfigured):
        # A mistake in the settings (the system checks name it at start-up): the operator
        # reads it in the log; the caller gets a problem, not a 500 with a traceback.
        logger.error("The request could not be served: %s", exc, exc_info=exc)
        exc = Problem.misconfigured()
    if isinstance(exc, Problem):
        response = Response(exc.as_dict(), status=exc.status)
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
    else:
        handled = exception_handler(exc, context)
        if handled is None:
            return None
        response = handled
        code = next((c for kind, c in _DRF_CODES if isinstance(exc, kind)), ProblemCode.ERROR)
        data = response.data
        body: dict[str, Any] = {
            "type": problem_type(code),
            "title": title_of(code),
            "status": response.status_code,
            "code": code.value,
        }
        if isinstance(exc, exceptions.ValidationError):
            body["detail"] = "Invalid input."
            body["errors"] = data if isinstance(data, dict) else {"nonFieldErrors": data}
        elif code is ProblemCode.NOT_FOUND:
            # One wording for missing and hidden objects alike.
            body["detail"] = Problem.not_found().detail
        else:
            detail = data.get("detail") if isinstance(data, dict) else data
            body["detail"] = str(detail) if detail is not None else body["title"]
        response.data = body
    if _wants_json(context):
        response.content_type = PROBLEM_CONTENT_TYPE
        request = context.get("request")
        renderer = getattr(request, "accepted_renderer", None)
        if renderer is not None and not str(renderer.media_type).endswith("json"):
            # A problem is JSON whatever the view negotiated for its success (the OpenAPI
            # document's YAML): DRF renders with the request's renderer, so swap it.
            request.accepted_renderer = JSONRenderer()  # type: ignore[union-attr]
            request.accepted_media_type = PROBLEM_CONTENT_TYPE  # type: ignore[union-attr]
    return response


def _problem_response(body: dict[str, Any], status: int) -> HttpResponse:
    # Compact, as DRF's JSONRenderer writes the app's other problems.
    return JsonResponse(
        body,
        status=status,
        content_type=PROBLEM_CONTENT_TYPE,
        json_dumps_params={"separators": (",", ":")},
    )


_NO_CREDENTIALS = "Authentication credentials were not provided."
_INVALID_CREDENTIALS = "The credentials are invalid or expired."


def unauthenticated(
    exc: exceptions.APIException, challenge: str | None, request: HttpRequest | None = None
) -> HttpResponse:
    """The one answer to a caller without valid credentials, on every URL of the app.

    Plain bytes, not a negotiated DRF response: whether the route exists or not, the
    answer is the same. As DRF does, it is a 403 when no authentication class offers a
    challenge. A browser (:func:`~affordances.rest.front_door.prefers_html`, given the
    ``request``) gets the same status and challenge as a page with a login link instead
    of the problem document; every other request (another method, ``Accept`` or
    ``format``) gets the problem.
    """
    status = 401 if challenge else 403
    # One wording per case, never the authentication class's own: "User is inactive" or
    # "User not found" would tell which accounts exist.
    failed = isinstance(exc, exceptions.AuthenticationFailed)
    detail = _INVALID_CREDENTIALS if failed else _NO_CREDENTIALS
    if request is not None and prefers_html(request):
        response = login_page(request, status=status, detail=detail)
    else:
        response = _problem_response(_not_authenticated(status, detail), status)
    if challenge:
        response["WWW-Authenticate"] = challenge
    patch_vary_headers(response, ["Accept", "Authorization", "Cookie"])
    patch_cache_control(response, private=True, no_cache=True)
    return response


def _not_authenticated(status: int, detail: str) -> dict[str, Any]:
    return {
        "type": problem_type(ProblemCode.NOT_AUTHENTICATED),
        "title": title_of(ProblemCode.NOT_AUTHENTICATED),
        "status": status,
        "code": ProblemCode.NOT_AUTHENTICATED.value,
        "detail": detail,
    }


_UNSET = object()


# Where :func:`caller` keeps its answer on DRF's request (an attribute of ours, public).
_CALLER = "affordances_caller"
# Where it keeps DRF's refusal of a session request without its CSRF token, raised by
# :meth:`ProblemResponsesMixin.initial` once the route is known not to be hidden.
_REFUSAL = "affordances_refusal"


def caller(request: Any) -> Any:
    """The DRF request's user; invalid credentials raise DRF's authentication errors.

    A refusal that is not about credentials (a session POST without its CSRF token) is
    DRF's to answer, as usual, but only after the route is known to exist for this
    caller: a hidden route must answer 404 whatever the request carries, or the refusal
    would tell that the operation exists. So the session's user is the caller, and
    DRF's verdict is kept on the request (``affordances_refusal``) for
    :meth:`ProblemResponsesMixin.initial` to raise. The answer is kept too: DRF
    remembers the failed authentication as an anonymous user.
    """
    known = request.__dict__.get(_CALLER, _UNSET)
    if known is not _UNSET:
        return known
    # The Django request's own user (the session's), before DRF's failed
    # authentication replaces it with an anonymous one.
    own = django_request(request).__dict__.get("user", _UNSET)
    try:
        user = request.user
    except (exceptions.NotAuthenticated, exceptions.AuthenticationFailed):
        raise
    except exceptions.APIException as refusal:
        if own is _UNSET:
            raise
        setattr(request, _REFUSAL, refusal)
        user = own
    setattr(request, _CALLER, user)
    return user


class _Answered(exceptions.APIException):
    """A refusal whose bytes are ready (:func:`unauthenticated`, the hidden route's 404):
    :meth:`ProblemResponsesMixin.handle_exception` returns them as they are."""

    def __init__(self, response: HttpResponse) -> None:
        super().__init__()
        self.response = response


# Marks a response answered past DRF's rendering: finalize_response adds no Allow,
# Vary or caching headers to it, so it is the same bytes on every route.
_PLAIN = "affordances_plain"


def _plain(response: HttpResponse) -> HttpResponse:
    setattr(response, _PLAIN, True)
    return response


def is_plain(response: HttpResponse) -> bool:
    """Whether ``response`` is one of the app's fixed answers, to leave as it is."""
    return bool(getattr(response, _PLAIN, False))


class ProblemResponsesMixin:
    """An APIView of the app: its errors are problem documents without any project setting,
    and a caller without valid credentials gets :func:`unauthenticated` first.

    Both through DRF's own hooks: :meth:`initial` (which DRF runs before content
    negotiation, versioning, permissions, throttles and the method check) refuses, the
    view's ``handle_exception`` answers the refusal's ready bytes, and
    ``finalize_response`` leaves them as they are.
    """

    affordances_problem_documents = True
    parser_classes: Sequence[type[BaseParser]] = PARSER_CLASSES
    # Accept's q-values decide (Ketting's default header asks HAL-FORMS first).
    content_negotiation_class: type[BaseContentNegotiation] = ContentNegotiation
    # The document states what the app's views enforce, whatever DEFAULT_SCHEMA_CLASS is.
    schema: ViewInspector | None = AutoSchema()

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return problem_exception_handler

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        refusal = self.credentials_refusal(request)
        if refusal is not None:
            raise _Answered(refusal)
        # The caller is authenticated (or the view admits anonymous callers): a route
        # it may not use answers what a made-up URL under the app's views does.
        if self.is_hidden_route(request):
            raise _Answered(_not_found())
        refusal = request.__dict__.get(_REFUSAL)
        if refusal is not None:
            raise refusal  # DRF's own verdict (CSRF), answered as DRF answers it
        super().initial(request, *args, **kwargs)  # type: ignore[misc]

    def is_hidden_route(self, request: Any) -> bool:
        """Whether this route is one the caller may not know about (an operation's)."""
        return False

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, _Answered):
            return exc.response  # type: ignore[return-value]
        return super().handle_exception(exc)  # type: ignore[misc, no-any-return]

    def finalize_response(self, request: Any, response: Any, *args: Any, **kwargs: Any) -> Any:
        if is_plain(response):
            return response
        return super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]

    def credentials_refusal(self, request: Any) -> HttpResponse | None:
        """:func:`unauthenticated` when the view's permissions refuse this caller for want
        of valid credentials (``request`` is DRF's); None to go on."""
        view: Any = self
        challenge = view.get_authenticate_header(request)
        asked = django_request(request)
        try:
            user = caller(request)
        except (exceptions.NotAuthenticated, exceptions.AuthenticationFailed) as exc:
            return _plain(unauthenticated(exc, challenge, asked))
        except exceptions.APIException:
            return None  # not about credentials: DRF answers it as usual
        if not getattr(user, "is_authenticated", False):
            try:
                denied = not all(p.has_permission(request, view) for p in view.get_permissions())
            except exceptions.APIException:
                denied = True
            if denied:
                return _plain(unauthenticated(exceptions.NotAuthenticated(), challenge, asked))
        return None


def _view_of(func: Any) -> Any:
    return getattr(func, "cls", None) or getattr(func, "view_class", None) or func


def _problem_view_above(path: str) -> Any:
    """The view function of the nearest URL above ``path`` served by one of the app's
    views, or None. Found by resolving the path's ancestors, so no URL prefix is
    written down here."""
    parts = [part for part in path.split("/") if part]
    while parts:
        base = "/" + "/".join(parts)
        for candidate in (base + "/", base):
            try:
                match = resolve(candidate)
            except Resolver404:
                continue
            if getattr(_view_of(match.func), PROBLEM_DOCUMENTS_ATTRIBUTE, False):
                return match.func
        parts.pop()
    return None


def _refusal_above(func: Any, request: HttpRequest) -> HttpResponse | None:
    """What the view above an unmatched URL answers a caller without credentials."""
    cls = _view_of(func)
    if not issubclass(cls, ProblemResponsesMixin):
        return None  # not a DRF view of the app (the MCP endpoint has its own answers)
    view: Any = cls(**getattr(func, "initkwargs", {}))
    view.action_map = {}  # a viewset: no action matches an unmatched URL
    view.format_kwarg = None
    view.args, view.kwargs = (), {}
    view.request = view.initialize_request(request)
    return view.credentials_refusal(view.request)  # type: ignore[no-any-return]


def refusal_at(path: str, request: HttpRequest) -> HttpResponse | None:
    """What the app's view at ``path`` answers this request's caller for want of valid
    credentials (:func:`unauthenticated`), or None when it would serve them or ``path``
    is not one of the app's views. A documentation page (Swagger UI, Redoc) asks it of
    the schema's URL, to say that it needs a login instead of failing to load."""
    try:
        match = resolve(path)
    except Resolver404:
        return None
    return _refusal_above(match.func, request)


def _not_found() -> HttpResponse:
    return _plain(_problem_response(Problem.not_found().as_dict(), 404))


def not_found_response(request: HttpRequest) -> HttpResponse | None:
    """What a URL under the app's views that matches no route answers (after the same
    credentials check as its neighbours that exist); None for a URL elsewhere."""
    func = _problem_view_above(request.path_info)
    if func is None:
        return None
    return _refusal_above(func, request) or _not_found()


def not_found_view(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: URLs under the app's views that match no route answer a problem."""
    return not_found_response(request) or page_not_found(request, exception)


def unmatched_route_view(viewset: type) -> Callable[..., HttpResponse]:
    """The last route under a resource's prefix (:class:`ResourceRouter` adds it): any
    path there that no route matches — a made-up action, an extra segment — answers
    :func:`not_found_response` as a view, so ``DEBUG``'s HTML 404 page never stands in
    for the problem document the OpenAPI document promises."""

    def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return not_found_response(request) or _not_found()

    # Read by _problem_view_above/_refusal_above: the viewset's credentials check.
    view.cls = viewset  # type: ignore[attr-defined]
    view.initkwargs = {}  # type: ignore[attr-defined]
    # Like DRF's views: a session POST without a CSRF token still gets the 404.
    view.csrf_exempt = True  # type: ignore[attr-defined]
    return view
