"""The forms profile (docs/protocol.md#mcp-profiles): two stable tools over HAL-FORMS,
``read_resource`` and ``submit_form``.

The agent starts at the API entry point, follows links, and acts only through a
template the resource offers *now*: ``submit_form`` reads the resource again and refuses
a template that is not (or no longer) there. Every request goes to the REST face as the
caller, so the catalog, evaluation and execution path are the same as everywhere.

A URL is taken as the API spells it: repeated slashes collapse and the trailing slash
the URLconf wants is added (Django's ``APPEND_SLASH`` rule: only when the path does not
resolve as written and does with the slash), so ``/api/orders/5`` reads ``/api/orders/5/``
instead of answering Django's 301. Redirects the API answers itself are followed, within
the API only and at most :data:`MAX_REDIRECTS` hops (see :func:`_fetch` for how a
submission is redirected).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from django.urls import is_valid_path, reverse

from affordances import routes
from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.mcp import confirmations, subrequest
from affordances.mcp.resources import locate
from affordances.mcp.subrequest import Answer, OutsideApi, api_path
from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError, dumps
from affordances.problems import PROBLEM_SCHEMA, Problem
from affordances.vocabulary import DIALECT

if TYPE_CHECKING:
    from affordances.mcp.context import Context

__all__ = ["MAX_REDIRECTS", "FormsTools", "canonical_url"]

UNKNOWN_TOOL = "Unknown tool. Call tools/list for the tools you may use."

_DOCUMENT = {
    "$schema": DIALECT,
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
            "$schema": DIALECT,
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
            "$schema": DIALECT,
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


# Hops a request may be redirected before it is refused (a loop ends here too).
MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Redirects that resend a submission as it was; the others would make it a read.
_KEEP_METHOD = frozenset({307, 308})
_SLASHES = re.compile(r"//+")


class _Moved(Exception):
    """A redirect the face will not follow; the message says why (nothing was done)."""


def canonical_url(request: Any, url: Any) -> str:
    """``url`` as the API spells it, or :class:`OutsideApi`: repeated slashes collapsed,
    the fragment dropped, and the trailing slash added where the URLconf wants one (the
    rule of Django's ``APPEND_SLASH``: the path does not resolve as written but does
    with the slash). Relative URLs stay relative; :func:`api_path` checks the origin."""
    if not isinstance(url, str) or not url:
        raise OutsideApi("The url must be a non-empty string.")
    parts = urlsplit(url)
    path = _SLASHES.sub("/", parts.path or "/")
    if not path.endswith("/") and not is_valid_path(path) and is_valid_path(path + "/"):
        path += "/"
    canonical = urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))
    api_path(request, canonical)  # another host, or outside the API: refused here
    return canonical


def _exchange(
    request: Any, method: str, url: str, body: dict[str, Any] | None
) -> tuple[Answer, str | None]:
    """One request through the project's stack as the caller (:func:`subrequest.send`),
    and the ``Location`` of a redirect."""
    answer = subrequest.send(request, method, url, body)
    return answer, answer.location if answer.status in _REDIRECTS else None


def _fetch(
    request: Any, method: str, url: str, body: dict[str, Any] | None = None
) -> tuple[Answer, str]:
    """``method url`` as the caller, the URL made canonical and the API's own redirects
    followed (same origin, under the API, at most :data:`MAX_REDIRECTS` hops); the
    answer and the URL that gave it. :class:`OutsideApi` for a URL (or a redirect) that
    leaves the API, :class:`_Moved` for a redirect not followed.

    A read follows every redirect. A submission is resent as it was on 307/308; on
    302/303 it was handled and the answer is read where it points (as browsers do); a
    301 to a submission is not followed — resent it might act twice, read it would
    look like a success — and nothing is resent.
    """
    url = canonical_url(request, url)
    for _ in range(MAX_REDIRECTS + 1):
        answer, location = _exchange(request, method, url, body)
        if location is None:
            return answer, url
        # Relative to where we are: the API's own absolute URL for what it named.
        path, query = api_path(request, url)
        here = request.build_absolute_uri(path + (f"?{query}" if query else ""))
        target = urljoin(here, location)
        if method not in {"GET", "HEAD"} and answer.status not in _KEEP_METHOD:
            if answer.status == 301:
                raise _Moved(
                    f"The API answered 301 to this submission (moved to {target}); it was "
                    "not resent. Read the resource there and submit again."
                )
            method, body = "GET", None  # 302/303: handled; its answer is over there
        url = canonical_url(request, target)
    raise _Moved(f"The API redirected more than {MAX_REDIRECTS} times; nothing more was done.")


def _result(body: dict[str, Any], *, is_error: bool) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": dumps(body)}],
        "structuredContent": body,
        "isError": is_error,
    }


def _problem(problem: Problem) -> dict[str, Any]:
    return _result(problem.as_dict(include_current=False), is_error=True)


class _Asking(Exception):
    """The person must be asked first: ``result`` is the InputRequiredResult."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input required")
        self.result = result


def _confirmed(
    ctx: Context, url: str, template: str, values: dict[str, Any], meta: dict[str, Any]
) -> dict[str, Any]:
    """The arguments to submit: as given, for an operation that does not ask the person;
    for one that does (docs/protocol.md#confirmations), the person's answer must come
    first, as on the catalog's tools — the form is asked for (:class:`_Asking`), or
    refused where the client cannot show one (:class:`confirmations.Refused`), and the
    accepted answer submits at the version the person saw. The REST face runs a POST on
    the call, so this is where the forms profile asks."""
    located = locate(url)
    if located is None:
        return values
    resource, pk = located
    operation = get_catalog().resolve(template, ctx.user, model=resource.model, transition=True)
    if operation is None or not operation.confirmation_required:
        return values
    # The id as the catalog's tool takes it in JSON: an integer key as a number (not its
    # digits), any other key (a UUID, text) as its text.
    key = resource.parse_pk(pk)
    call = {**values, resource.id_argument: key if isinstance(key, int) else str(key)}
    if ctx.request_state is not None or ctx.input_responses is not None:
        completed, version = confirmations.answered(
            ctx, operation, call, ctx.request_state, ctx.input_responses
        )
        submitted = {k: v for k, v in completed.items() if k != resource.id_argument}
        return {**submitted, "expectedVersion": version}
    missing = confirmations.missing_inputs(operation, call)
    elicit = confirmations.can_elicit(ctx, meta)
    raise _Asking(confirmations.confirm(ctx, operation, call, missing, elicit=elicit))


def _not_offered(ctx: Context, url: str, name: str) -> tuple[str, str]:
    """A template the document did not offer: the core says why, as it would anywhere.

    Not an operation (a transition, or the edit) of this resource the caller may know →
    not_found; one that does not apply now → operation_not_available with the core's
    reason. One that applies after all (it changed since the read) runs through its own
    route, like any other.
    """
    located = locate(url)
    if located is None:
        raise Problem.not_found()
    resource, pk = located
    catalog = get_catalog()
    operation = catalog.resolve(name, ctx.user, model=resource.model, transition=True)
    edit = catalog.edit_for(resource.model)
    if operation is None and edit is not None and edit.name == name and edit.permits(ctx.user):
        operation = edit  # the object's edit (edit_{resource}), a template too
    if operation is None:
        raise Problem.not_found()
    verdict = evaluate(operation, ctx.find(resource, pk), ctx.user)
    if isinstance(verdict, Unavailable):
        raise Problem.not_available(operation=operation.name, reason=verdict.reason)
    if not isinstance(verdict, Available):
        raise Problem.not_found()
    path = routes.operation_path(operation, pk)
    if path is None:
        raise Problem.not_found()
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
        return str(ctx.absolute(reverse(routes.ENTRY_POINT)))

    def call_tool(
        self, ctx: Context, name: str, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> dict[str, Any]:
        if name == "read_resource":
            return self._read(ctx, arguments)
        if name == "submit_form":
            return self._submit(ctx, arguments, meta)
        raise JsonRpcError(INVALID_PARAMS, UNKNOWN_TOOL)

    def _read(self, ctx: Context, arguments: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(arguments) - {"url"})
        if unknown or "url" not in arguments:
            errors = {name: ["Unknown argument."] for name in unknown}
            if "url" not in arguments:
                errors["url"] = ["This field is required."]
            return _problem(Problem.validation(errors))
        try:
            answer, _ = _fetch(ctx.request, "GET", arguments["url"])
        except (OutsideApi, _Moved) as exc:
            return _problem(Problem.validation({"url": [str(exc)]}))
        return self._answer(answer.status, answer.body)

    def _submit(
        self, ctx: Context, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> dict[str, Any]:
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
            current, url = _fetch(ctx.request, "GET", arguments["url"])
        except (OutsideApi, _Moved) as exc:
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
                target, method = _not_offered(ctx, url, arguments["template"])
            except Problem as problem:
                return _problem(problem)
        if method != "GET":
            try:
                values = _confirmed(ctx, url, arguments["template"], values, meta)
            except confirmations.Refused as refused:
                return _result(refused.body, is_error=True)
            except Problem as problem:
                return _problem(problem)
            except _Asking as asking:
                return asking.result
        try:
            answer, _ = _fetch(ctx.request, method, target, values if method != "GET" else None)
        except (OutsideApi, _Moved) as exc:  # a template we rendered never points elsewhere
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
