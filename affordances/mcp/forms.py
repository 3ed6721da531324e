"""Interface C (SPEC §12): two stable tools over HAL-FORMS, ``read_resource`` and ``submit_form``.

The agent starts at the API entry point, follows links, and acts only through a
template the resource offers *now*: ``submit_form`` reads the resource again and refuses
a template that is not (or no longer) there. Every request goes to the REST face as the
caller, so the catalog, evaluation and execution path are the same as everywhere.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from django.urls import NoReverseMatch, reverse

from affordances import reads
from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.mcp.resources import locate
from affordances.mcp.subrequest import OutsideApi, send
from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError, dumps
from affordances.names import ENTRY_POINT_URL_NAME
from affordances.problems import PROBLEM_SCHEMA, Problem

if TYPE_CHECKING:
    from affordances.mcp.context import Context

__all__ = ["FormsTools"]

UNKNOWN_TOOL = "Unknown tool. Call tools/list for the tools you may use."

_DOCUMENT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "description": (
        "A HAL-FORMS document (`_links`, `_templates`, `_embedded`), or a problem "
        "document (`code`, `detail`) when the request was refused."
    ),
    "anyOf": [
        {"type": "object", "required": ["_links"]},
        {k: v for k, v in PROBLEM_SCHEMA.items() if k != "description"},
    ],
}

_ANNOTATIONS_READ = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
_ANNOTATIONS_SUBMIT = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": False,
}

_TOOLS = [
    {
        "name": "read_resource",
        "title": "Read a resource",
        "description": (
            "Read any resource of this API as a HAL-FORMS document. Start at the entry "
            "point the instructions give and follow `_links` (and `_embedded` items' "
            "`_links.self`). A document's `_templates` are the actions it offers you now; "
            "there is nothing else you can do to it."
        ),
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "An absolute URL of this API, taken from a link.",
                }
            },
            "required": ["url"],
            "additionalProperties": False,
        },
        "outputSchema": _DOCUMENT,
        "annotations": _ANNOTATIONS_READ,
    },
    {
        "name": "submit_form",
        "title": "Submit a form",
        "description": (
            "Run one template of a resource: `url` is the resource you read, `template` "
            "the key of one of its `_templates`, `arguments` the values of its "
            "`properties` (only offered `options`, within `min`/`max`/`regex`; copy hidden "
            "properties such as `expectedVersion` as they are). A template the resource "
            "does not offer now is refused with operation_not_available; read it again. "
            "The answer is the resource after the action, or a problem."
        ),
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The URL of the resource you read."},
                "template": {"type": "string", "description": "A key of its `_templates`."},
                "arguments": {
                    "type": "object",
                    "description": "Values for the template's properties, by name.",
                },
            },
            "required": ["url", "template"],
            "additionalProperties": False,
        },
        "outputSchema": _DOCUMENT,
        "annotations": _ANNOTATIONS_SUBMIT,
    },
]


def _result(body: dict[str, Any], *, is_error: bool) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": dumps(body)}],
        "structuredContent": body,
        "isError": is_error,
    }


def _problem(problem: Problem) -> dict[str, Any]:
    return _result(problem.as_dict(include_current=False), is_error=True)


def _not_offered(ctx: Context, url: str, name: str) -> tuple[str, str]:
    """A template the document did not offer: the core says why, as it would anywhere.

    Not an operation of this resource the caller may know → not_found; one that does not
    apply now → operation_not_available with the core's reason. One that applies after
    all (it changed since the read) runs through its own route, like any other.
    """
    located = locate(url)
    operation = get_catalog().lookup(name)
    if located is None or operation is None or operation.name != name:
        raise Problem.not_found()
    resource, pk = located
    if operation.resource is not resource or not operation.is_transition:
        raise Problem.not_found()
    verdict = evaluate(operation, reads.find(resource, ctx.user, pk), ctx.user)
    if isinstance(verdict, Unavailable):
        raise Problem.not_available(operation=operation.name, reason=verdict.reason)
    if not isinstance(verdict, Available):
        raise Problem.not_found()
    try:
        path = reverse(f"{resource.basename}-{operation.method_name}", kwargs={"pk": pk})
    except NoReverseMatch:
        raise Problem.not_found() from None
    return ctx.absolute(path), operation.http_method


class FormsTools:
    """The same two tools for every caller; what each may do shows in the documents."""

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        tools = [dict(tool) for tool in _TOOLS]
        tools[0]["description"] = f"{tools[0]['description']} The entry point is {self._entry(ctx)}"
        return tools

    def list_key(self, ctx: Context) -> Hashable:
        return self._entry(ctx)

    def _entry(self, ctx: Context) -> str:
        return str(ctx.absolute(reverse(ENTRY_POINT_URL_NAME)))

    def call_tool(
        self, ctx: Context, name: str, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> dict[str, Any]:
        if name == "read_resource":
            return self._read(ctx, arguments)
        if name == "submit_form":
            return self._submit(ctx, arguments)
        raise JsonRpcError(INVALID_PARAMS, UNKNOWN_TOOL)

    def _read(self, ctx: Context, arguments: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(arguments) - {"url"})
        if unknown or "url" not in arguments:
            errors = {name: ["Unknown argument."] for name in unknown}
            if "url" not in arguments:
                errors["url"] = ["This field is required."]
            return _problem(Problem.validation(errors))
        try:
            answer = send(ctx.request, "GET", arguments["url"])
        except OutsideApi as exc:
            return _problem(Problem.validation({"url": [str(exc)]}))
        return self._answer(answer.status, answer.body)

    def _submit(self, ctx: Context, arguments: dict[str, Any]) -> dict[str, Any]:
        errors: dict[str, list[str]] = {
            name: ["Unknown argument."]
            for name in sorted(set(arguments) - {"url", "template", "arguments"})
        }
        for name in ("url", "template"):
            if not isinstance(arguments.get(name), str) or not arguments.get(name):
                errors[name] = ["This field is required (a string)."]
        values = arguments.get("arguments", {})
        if not isinstance(values, dict):
            errors["arguments"] = ["Must be an object."]
        if errors:
            return _problem(Problem.validation(errors))
        try:
            current = send(ctx.request, "GET", arguments["url"])
        except OutsideApi as exc:
            return _problem(Problem.validation({"url": [str(exc)]}))
        if current.status != 200 or not isinstance(current.body, dict):
            return self._answer(current.status, current.body)
        template = current.body.get("_templates", {}).get(arguments["template"])
        if isinstance(template, dict):
            target = template.get("target") or current.body.get("_links", {}).get("self", {}).get(
                "href"
            )
            method = str(template.get("method") or "GET").upper()
        else:
            try:
                target, method = _not_offered(ctx, arguments["url"], arguments["template"])
            except Problem as problem:
                return _problem(problem)
        try:
            answer = send(ctx.request, method, target, values if method != "GET" else None)
        except OutsideApi as exc:  # a template we rendered never points elsewhere
            return _problem(Problem.validation({"template": [str(exc)]}))
        return self._answer(answer.status, answer.body)

    @staticmethod
    def _answer(status: int, body: Any) -> dict[str, Any]:
        if isinstance(body, dict) and status < 400:
            return _result(body, is_error=False)
        if isinstance(body, dict) and "code" in body:
            body = {k: v for k, v in body.items() if k != "current"}
            return _result(body, is_error=True)
        # Anything else (e.g. a 405 on a URL that takes no such method) as a problem.
        problem = (
            Problem.not_found()
            if status == 404
            else Problem.malformed(f"The API answered {status}.")
        )
        return _problem(problem)
