"""Interface C (SPEC §12): two stable tools over HAL-FORMS, ``read_resource`` and ``submit_form``.

The agent starts at the API entry point, follows links, and acts only through a
template the resource offers *now*: ``submit_form`` reads the resource again and refuses
a template that is not (or no longer) there. Every request goes to the REST face as the
caller, so the catalog, evaluation and execution path are the same as everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import reverse

from affordances.mcp.jsonrpc import INVALID_PARAMS, JsonRpcError, dumps
from affordances.mcp.subrequest import OutsideApi, send
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


class FormsTools:
    """The same two tools for every caller; what each may do shows in the documents."""

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        entry = ctx.absolute(reverse("api-entry-point"))
        tools = [dict(tool) for tool in _TOOLS]
        tools[0]["description"] = f"{tools[0]['description']} The entry point is {entry}"
        return tools

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
        if answer.status == 405:
            # An action URL read with GET: it must read like any URL that is not there,
            # or guessing URLs would tell which actions exist.
            return _problem(Problem.not_found())
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
        if not isinstance(template, dict):
            # Not offered now — whether it never existed, does not apply, or is not yours
            # reads the same, so nothing leaks.
            return _problem(
                Problem(
                    status=409,
                    code="operation_not_available",
                    detail="The resource does not offer this template now; read it again "
                    "and use one of its _templates.",
                    reason="template_not_offered",
                )
            )
        target = template.get("target") or current.body.get("_links", {}).get("self", {}).get(
            "href"
        )
        method = str(template.get("method") or "GET").upper()
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
