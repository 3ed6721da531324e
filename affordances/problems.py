"""Errors as values: one exception type, rendered as RFC 9457 problem details.

The REST face renders a :class:`Problem` as ``application/problem+json``; the MCP face
as a tool result with ``isError``. Codes are stable and part of the contract.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from affordances.conf import settings

__all__ = [
    "PROBLEM_CONTENT_TYPE",
    "PROBLEM_SCHEMA",
    "Problem",
    "problem_exception_handler",
]

PROBLEM_CONTENT_TYPE = "application/problem+json"

TITLES = {
    "not_found": "Not found",
    "stale_version": "Stale version",
    "operation_not_available": "Operation not available",
    "validation_error": "Invalid arguments",
    "malformed_request": "Malformed request",
    "idempotency_key_reused": "Idempotency key reused",
    "idempotency_key_in_use": "Idempotency key in use",
    "transition_failed": "Operation failed",
    "not_authenticated": "Not authenticated",
    "permission_denied": "Permission denied",
    "method_not_allowed": "Method not allowed",
    "not_acceptable": "Not acceptable",
    "unsupported_media_type": "Unsupported media type",
    "throttled": "Too many requests",
    "error": "Error",
}


class Problem(Exception):
    """A refusal with a stable machine ``code``; nothing ran when one is raised."""

    def __init__(
        self,
        *,
        status: int,
        code: str,
        detail: str,
        reason: str | None = None,
        errors: dict[str, list[str]] | None = None,
        current: dict[str, Any] | None = None,
        wants_current: bool = False,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.reason = reason
        self.errors = errors
        self.current = current
        # 409 and 412 carry the current representation; the face that renders it
        # fills ``current`` after the transaction has been rolled back.
        self.wants_current = wants_current

    @property
    def title(self) -> str:
        return TITLES.get(self.code, "Error")

    def as_dict(self, *, include_current: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": f"urn:{settings.NAMESPACE}:problem:{self.code.replace('_', '-')}",
            "title": self.title,
            "status": self.status,
            "code": self.code,
            "detail": self.detail,
        }
        if self.reason is not None:
            body["reason"] = self.reason
        if self.errors is not None:
            body["errors"] = self.errors
        if include_current and self.current is not None:
            body["current"] = self.current
        return body

    # Constructors for the codes of SPEC §6, so the wording lives in one place.
    @classmethod
    def not_found(cls) -> Problem:
        # One wording everywhere, so a hidden object reads exactly like a missing one.
        return cls(status=404, code="not_found", detail="Not found.")

    @classmethod
    def stale_version(cls, *, expected: int, actual: int) -> Problem:
        return cls(
            status=412,
            code="stale_version",
            detail=f"You acted on version {expected}; the current version is {actual}. "
            "Read it again and decide anew.",
            wants_current=True,
        )

    @classmethod
    def not_available(cls, *, operation: str, reason: str) -> Problem:
        return cls(
            status=409,
            code="operation_not_available",
            detail=f"{operation} is not available now: {reason}.",
            reason=reason,
            wants_current=True,
        )

    @classmethod
    def validation(cls, errors: dict[str, list[str]]) -> Problem:
        fields = ", ".join(sorted(errors))
        return cls(
            status=400,
            code="validation_error",
            detail=f"Invalid arguments: {fields}.",
            errors=errors,
        )

    @classmethod
    def malformed(cls, detail: str) -> Problem:
        return cls(status=400, code="malformed_request", detail=detail)


# The document of Problem.as_dict, as JSON Schema (MCP outputSchema admits it).
PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A refusal (RFC 9457 problem details); nothing ran.",
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "code": {
            "type": "string",
            "description": (
                "not_found, stale_version, operation_not_available, validation_error, "
                "malformed_request, idempotency_key_reused, idempotency_key_in_use or "
                "transition_failed."
            ),
        },
        "detail": {"type": "string"},
        "reason": {
            "type": "string",
            "description": "Why the operation does not apply now (operation_not_available).",
        },
        "errors": {
            "type": "object",
            "description": "Messages per argument (validation_error).",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "current": {
            "type": "object",
            "description": (
                "The object as it is now, with its affordances "
                "(stale_version, operation_not_available)."
            ),
        },
    },
    "required": ["type", "title", "status", "code", "detail"],
}

_DRF_CODES: list[tuple[type[Exception], str]] = [
    (exceptions.NotFound, "not_found"),
    (Http404, "not_found"),
    (DjangoPermissionDenied, "permission_denied"),
    (exceptions.ParseError, "malformed_request"),
    (exceptions.ValidationError, "validation_error"),
    (exceptions.NotAuthenticated, "not_authenticated"),
    (exceptions.AuthenticationFailed, "not_authenticated"),
    (exceptions.PermissionDenied, "permission_denied"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.Throttled, "throttled"),
]


def _wants_json(context: dict[str, Any]) -> bool:
    request = context.get("request")
    renderer = getattr(request, "accepted_renderer", None)
    return renderer is None or getattr(renderer, "format", "json") != "api"


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exception handler: every error of the API is a problem document."""
    if isinstance(exc, Problem):
        response = Response(exc.as_dict(), status=exc.status)
    else:
        response = exception_handler(exc, context)
        if response is None:
            return None
        code = next((c for kind, c in _DRF_CODES if isinstance(exc, kind)), "error")
        data = response.data
        body: dict[str, Any] = {
            "type": f"urn:{settings.NAMESPACE}:problem:{code.replace('_', '-')}",
            "title": TITLES.get(code, "Error"),
            "status": response.status_code,
            "code": code,
        }
        if isinstance(exc, exceptions.ValidationError):
            body["detail"] = "Invalid input."
            body["errors"] = data if isinstance(data, dict) else {"nonFieldErrors": data}
        elif code == "not_found":
            # One wording for missing and hidden objects alike.
            body["detail"] = "Not found."
        else:
            detail = data.get("detail") if isinstance(data, dict) else data
            body["detail"] = str(detail) if detail is not None else body["title"]
        response.data = body
    if _wants_json(context):
        response.content_type = PROBLEM_CONTENT_TYPE
    return response


def not_found_view(request: Any, exception: Exception | None = None) -> Any:
    """``handler404``: API and MCP URLs that match no route answer a problem document too."""
    from django.http import JsonResponse
    from django.views.defaults import page_not_found

    if request.path.startswith(("/api/", "/mcp")):
        body = Problem.not_found().as_dict()
        return JsonResponse(body, status=404, content_type=PROBLEM_CONTENT_TYPE)
    return page_not_found(request, exception)
