"""Problems as DRF responses: every error of the app's views is a problem document.

The app's own views use :func:`problem_exception_handler` whatever the project's
``EXCEPTION_HANDLER`` is (see :class:`ProblemResponsesMixin`); projects may also set it
for their other views. :func:`not_found_view` is an optional ``handler404`` for URLs
under the app's views that match no route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from affordances.problems import (
    PROBLEM_CONTENT_TYPE,
    Problem,
    ProblemCode,
    problem_type,
    title_of,
)

__all__ = ["ProblemResponsesMixin", "not_found_view", "problem_exception_handler"]

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
]

# Marks a view whose unmatched sub-URLs answer problem documents (see not_found_view).
PROBLEM_DOCUMENTS_ATTRIBUTE = "affordances_problem_documents"


def _wants_json(context: dict[str, Any]) -> bool:
    request = context.get("request")
    renderer = getattr(request, "accepted_renderer", None)
    return renderer is None or getattr(renderer, "format", "json") != "api"


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error of the API is a problem document."""
    if isinstance(exc, Problem):
        response = Response(exc.as_dict(), status=exc.status)
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
    return response


class ProblemResponsesMixin:
    """An APIView of the app: its errors are problem documents without any project setting."""

    affordances_problem_documents = True

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return problem_exception_handler


def _view_of(func: Any) -> Any:
    return getattr(func, "cls", None) or getattr(func, "view_class", None) or func


def _under_problem_view(path: str) -> bool:
    """Whether ``path`` lies under a URL served by one of the app's views.

    Found by resolving the path's ancestors, so no URL prefix is written down here.
    """
    parts = [part for part in path.split("/") if part]
    while parts:
        base = "/" + "/".join(parts)
        for candidate in (base + "/", base):
            try:
                match = resolve(candidate)
            except Resolver404:
                continue
            if getattr(_view_of(match.func), PROBLEM_DOCUMENTS_ATTRIBUTE, False):
                return True
        parts.pop()
    return False


def not_found_view(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: URLs under the app's views that match no route answer a problem."""
    if _under_problem_view(request.path_info):
        body = Problem.not_found().as_dict()
        return JsonResponse(body, status=404, content_type=PROBLEM_CONTENT_TYPE)
    return page_not_found(request, exception)
