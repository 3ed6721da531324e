"""Errors as values: one exception type with one vocabulary of codes (RFC 9457 problems).

Every refusal anywhere in the app is a :class:`Problem` whose ``code`` is a
:class:`ProblemCode`. The REST face renders it as ``application/problem+json``, the MCP
face as a tool result with ``isError``, the admin as a message. Codes are stable and part
of the contract.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from affordances.conf import settings

__all__ = [
    "PROBLEM_CONTENT_TYPE",
    "PROBLEM_SCHEMA",
    "Problem",
    "ProblemCode",
    "problem_type",
    "title_of",
]

PROBLEM_CONTENT_TYPE = "application/problem+json"


class ProblemCode(StrEnum):
    """Every machine ``code`` a problem document may carry."""

    NOT_FOUND = "not_found"
    STALE_VERSION = "stale_version"
    # A read's own If-Match (or If-Unmodified-Since) failed, as Django evaluates it.
    PRECONDITION_FAILED = "precondition_failed"
    OPERATION_NOT_AVAILABLE = "operation_not_available"
    VALIDATION_ERROR = "validation_error"
    MALFORMED_REQUEST = "malformed_request"
    REQUEST_TOO_LARGE = "request_too_large"
    IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"
    IDEMPOTENCY_KEY_IN_USE = "idempotency_key_in_use"
    TRANSITION_FAILED = "transition_failed"
    LOCK_TIMEOUT = "lock_timeout"
    NOT_AUTHENTICATED = "not_authenticated"
    PERMISSION_DENIED = "permission_denied"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    THROTTLED = "throttled"
    # docs/protocol.md#confirmations: the person must be asked (or was, and said no).
    CONFIRMATION_REQUIRED = "confirmation_required"
    CONFIRMATION_DECLINED = "confirmation_declined"
    ERROR = "error"


_TITLES: dict[ProblemCode, str] = {
    ProblemCode.NOT_FOUND: "Not found",
    ProblemCode.STALE_VERSION: "Stale version",
    ProblemCode.PRECONDITION_FAILED: "Precondition failed",
    ProblemCode.OPERATION_NOT_AVAILABLE: "Operation not available",
    ProblemCode.VALIDATION_ERROR: "Invalid arguments",
    ProblemCode.MALFORMED_REQUEST: "Malformed request",
    ProblemCode.REQUEST_TOO_LARGE: "Request too large",
    ProblemCode.IDEMPOTENCY_KEY_REUSED: "Idempotency key reused",
    ProblemCode.IDEMPOTENCY_KEY_IN_USE: "Idempotency key in use",
    ProblemCode.TRANSITION_FAILED: "Operation failed",
    ProblemCode.LOCK_TIMEOUT: "Object busy",
    ProblemCode.NOT_AUTHENTICATED: "Not authenticated",
    ProblemCode.PERMISSION_DENIED: "Permission denied",
    ProblemCode.METHOD_NOT_ALLOWED: "Method not allowed",
    ProblemCode.NOT_ACCEPTABLE: "Not acceptable",
    ProblemCode.UNSUPPORTED_MEDIA_TYPE: "Unsupported media type",
    ProblemCode.THROTTLED: "Too many requests",
    ProblemCode.CONFIRMATION_REQUIRED: "Confirmation required",
    ProblemCode.CONFIRMATION_DECLINED: "Confirmation declined",
    ProblemCode.ERROR: "Error",
}


def title_of(code: ProblemCode) -> str:
    """The human title of a problem code."""
    return _TITLES[code]


def problem_type(code: ProblemCode) -> str:
    return f"urn:{settings.NAMESPACE}:problem:{code.value.replace('_', '-')}"


class Problem(Exception):
    """A refusal with a stable machine ``code``; nothing ran when one is raised."""

    def __init__(
        self,
        *,
        status: int,
        code: ProblemCode,
        detail: str,
        reason: str | None = None,
        errors: dict[str, list[str]] | None = None,
        current: dict[str, Any] | None = None,
        wants_current: bool = False,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = ProblemCode(code)
        self.detail = detail
        self.reason = reason
        self.errors = errors
        self.current = current
        # 409 and 412 carry the current representation; the face that renders it
        # fills ``current`` after the transaction has been rolled back.
        self.wants_current = wants_current
        # Seconds after which the same request may succeed (HTTP faces: Retry-After).
        self.retry_after = retry_after

    @property
    def title(self) -> str:
        return title_of(self.code)

    def as_dict(self, *, include_current: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": problem_type(self.code),
            "title": self.title,
            "status": self.status,
            "code": self.code.value,
            "detail": self.detail,
        }
        if self.reason is not None:
            body["reason"] = self.reason
        if self.errors is not None:
            body["errors"] = self.errors
        if include_current and self.current is not None:
            body["current"] = self.current
        return body

    # Constructors for the codes of docs/protocol.md#execution, so the wording lives in one place.
    @classmethod
    def not_found(cls) -> Problem:
        # One wording everywhere, so a hidden object reads exactly like a missing one.
        return cls(status=404, code=ProblemCode.NOT_FOUND, detail="Not found.")

    @classmethod
    def stale_version(cls, *, expected: int, actual: int) -> Problem:
        return cls(
            status=412,
            code=ProblemCode.STALE_VERSION,
            detail=f"You acted on version {expected}; the current version is {actual}. "
            "Read it again and decide anew.",
            wants_current=True,
        )

    @classmethod
    def not_available(cls, *, operation: str, reason: str) -> Problem:
        return cls(
            status=409,
            code=ProblemCode.OPERATION_NOT_AVAILABLE,
            detail=f"{operation} is not available now: {reason}.",
            reason=reason,
            wants_current=True,
        )

    @classmethod
    def validation(cls, errors: dict[str, list[str]]) -> Problem:
        fields = ", ".join(sorted(errors))
        return cls(
            status=400,
            code=ProblemCode.VALIDATION_ERROR,
            detail=f"Invalid arguments: {fields}.",
            errors=errors,
        )

    @classmethod
    def malformed(cls, detail: str) -> Problem:
        return cls(status=400, code=ProblemCode.MALFORMED_REQUEST, detail=detail)

    @classmethod
    def may_not_create(cls) -> Problem:
        """A collection operation the caller lacks: as if the collection took no POST.

        Every face answers it the same way (REST 405 without POST in ``Allow``, the
        admin 405, ``perform_create`` raises it), exactly as for a collection that has
        no create operation at all, so the capability does not show.
        """
        return cls(
            status=405,
            code=ProblemCode.METHOD_NOT_ALLOWED,
            # DRF's own words for a collection without POST: the two must not differ.
            detail='Method "POST" not allowed.',
        )

    @classmethod
    def transition_failed(cls, *, operation: str, wants_current: bool) -> Problem:
        return cls(
            status=409,
            code=ProblemCode.TRANSITION_FAILED,
            detail=f"{operation} failed and was rolled back; nothing changed.",
            wants_current=wants_current,
        )

    @classmethod
    def lock_timeout(cls) -> Problem:
        """Another run held the object's lock for too long: retryable, and nothing ran."""
        return cls(
            status=503,
            code=ProblemCode.LOCK_TIMEOUT,
            detail="The object is busy with another change; nothing ran. Retry shortly.",
            retry_after=1,
        )

    @classmethod
    def misconfigured(cls) -> Problem:
        """The server is not set up to serve this — a mistake in its settings, or its
        database without the app's tables: its operator's to fix (the system checks and
        the log say what), never a 500 with a traceback; nothing ran."""
        return cls(
            status=503,
            code=ProblemCode.ERROR,
            detail="The server is not set up to serve this; nothing ran. Its log and "
            "`manage.py check` say what to fix.",
        )


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
                "malformed_request, idempotency_key_reused, idempotency_key_in_use, "
                "transition_failed, lock_timeout (retry shortly), confirmation_required "
                "(the person must be asked first) or confirmation_declined (they said no)."
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
