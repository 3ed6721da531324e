"""drf-spectacular post-processing: the OpenAPI document as one more face of the catalog.

Served to a caller, the document leaves out every operation that caller lacks the
capability for (and the components only they used), like every other face. It also
states the uniform error model: any operation may answer a problem document
(``application/problem+json``) with the statuses listed in ``ERROR_STATUSES``, and
HAL-FORMS bodies are described as HAL-FORMS, not as the JSON representation.
"""

from __future__ import annotations

from typing import Any

from affordances.catalog import get_catalog
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.problems import PROBLEM_CONTENT_TYPE, PROBLEM_SCHEMA

__all__ = ["ERROR_STATUSES", "postprocess"]

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
_HAL_BODY = {"type": "object", "description": "HAL-FORMS: `_links`, `_templates`, `_embedded`."}
_METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}


def postprocess(
    result: dict[str, Any], generator: Any, request: Any, public: bool, **kwargs: Any
) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is not None:
        _hide_operations(result, user)
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method in _METHODS:
                _complete_responses(operation)
    result.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM_SCHEMA
    _prune_components(result)
    return result


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
        if status.startswith("2") and content and HAL_FORMS_MEDIA_TYPE in content:
            content[HAL_FORMS_MEDIA_TYPE] = {"schema": _HAL_BODY}
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
