"""The catalog as MCP tools, and ``tools/call`` as the one execution path (docs/protocol.md#mcp).

A tool is a catalog entry the caller may know about, rendered once more: same name,
prose, schemas (the input as model providers take it, :func:`~affordances.mcp.tool_schemas.
tool_input_schema`) and hints, plus the operation URN in ``_meta``. Calling it reads (as
REST reads) or runs ``perform``/``perform_create(..., via="mcp")`` (an edit,
``edit_{resource}``, through ``perform`` as a transition); a refusal is a
result with ``isError`` and the problem as ``structuredContent``, so the agent sees why
and can recover. An unknown tool and a tool the caller lacks the capability for fail
alike (-32602), without saying which — the no-leak rule.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from affordances import execution, idempotency
from affordances.arguments import absent_nulls, schema_errors
from affordances.catalog import get_catalog
from affordances.entries import Shape, shaped_schema
from affordances.mcp import confirmations, reads
from affordances.mcp.tool_schemas import tool_input_schema
from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError, dumps
from affordances.models import Interface
from affordances.operations import Operation
from affordances.problems import PROBLEM_SCHEMA, Problem
from affordances.vocabulary import DIALECT

if TYPE_CHECKING:
    from affordances.mcp.context import Context

__all__ = [
    "IDEMPOTENCY_KEY",
    "OPERATION_KEY",
    "REPLAYED_KEY",
    "CatalogTools",
    "output_schema",
    "tool_result",
]

OPERATION_KEY = "affordances/operation"
IDEMPOTENCY_KEY = "affordances/idempotencyKey"
REPLAYED_KEY = "affordances/replayed"

UNKNOWN_TOOL = "Unknown tool. Call tools/list for the tools you may use."


def output_schema(
    success: dict[str, Any], *, shape: Shape = Shape.FULL, problem_current: bool = True
) -> dict[str, Any]:
    """Success or problem: ``structuredContent`` conforms whichever way a call ends.

    The root stays ``type: object`` (required by 2025-11-25); the two shapes are told
    apart by their required keys.
    """
    problem = copy.deepcopy(PROBLEM_SCHEMA)
    if not problem_current:
        del problem["properties"]["current"]
    return {
        "$schema": DIALECT,
        "type": "object",
        "anyOf": [shaped_schema(success, shape), problem],
    }


def tool_result(
    body: dict[str, Any],
    *,
    is_error: bool = False,
    replayed: bool = False,
) -> dict[str, Any]:
    """A ``CallToolResult``: the body as structured content, and as the same JSON in the
    one content block (docs/protocol.md#mcp).

    One text block and nothing else, so that every client reads the representation:
    pydantic-ai hands the model ``structuredContent`` only when every block is text (a
    ``resource_link`` beside it made that ``[representation, url]``), openai-agents
    without ``use_structured_content`` hands it the blocks (a link: a second JSON text),
    clients that take the first block take this one. The object's resource URI is its
    ``url``, in the body already (:mod:`affordances.mcp.resources`).
    """
    content = [{"type": "text", "text": dumps(body)}]
    result: dict[str, Any] = {"content": content, "structuredContent": body, "isError": is_error}
    if replayed:
        result["_meta"] = {REPLAYED_KEY: True}
    return result


class CatalogTools:
    """One tool per catalog operation the caller has the capability for (docs/protocol.md#mcp)."""

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        catalog = get_catalog()
        return [
            self._tool(ctx, catalog.documents[operation.name])
            for operation in catalog.for_user(ctx.user)
        ]

    def list_key(self, ctx: Context) -> Hashable:
        # The caller's capabilities, through the operations they let it know about.
        operations = tuple(op.name for op in get_catalog().for_user(ctx.user))
        return (ctx.shape, ctx.problem_current, operations)

    def _tool(self, ctx: Context, entry: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": entry["name"],
            "title": entry["title"],
            "description": entry["description"],
            # The catalog's schema as model providers take it; tools/call still checks
            # the arguments against the catalog's own (call_tool).
            "inputSchema": tool_input_schema(entry["inputSchema"]),
            "outputSchema": output_schema(
                entry["outputSchema"],
                shape=ctx.shape,
                problem_current=ctx.problem_current,
            ),
            "annotations": entry["annotations"],
            "_meta": {OPERATION_KEY: entry["id"]},
        }

    def call_tool(
        self, ctx: Context, name: str, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> dict[str, Any]:
        # A tool is called by its name only, never its URN.
        operation = get_catalog().resolve(name, ctx.user)
        if operation is None:
            raise JsonRpcError(INVALID_PARAMS, UNKNOWN_TOOL)
        try:
            # A malformed key is malformed _meta, as a key that is no string always was.
            key = idempotency.parse_key(meta.get(IDEMPOTENCY_KEY))
        except Problem:
            raise JsonRpcError(
                INVALID_PARAMS,
                f'Invalid params: _meta["{IDEMPOTENCY_KEY}"] must be {idempotency.KEY_RULE}.',
            ) from None
        # A null for an optional argument is absent (docs/protocol.md#execution): the
        # tool's inputSchema offers it to strict-mode models; the reads take it so too.
        arguments = absent_nulls(operation.input_schema, arguments)
        try:
            if operation.is_transition:
                asked = self._ask_or_resume(ctx, operation, arguments, key, meta)
                if asked is not None:
                    return asked
            # The catalog's inputSchema first (docs/protocol.md#mcp), every bound the tool's
            # leaves to its descriptions included: "1" or 1e400 is no order id.
            errors = schema_errors(operation.input_schema, arguments)
            if errors:
                raise Problem.validation(errors)
            if operation.is_transition or operation.is_edit:
                # An edit (edit_{resource}) runs the same path: its fields are its arguments.
                outcome = execution.perform(
                    operation=operation,
                    pk=arguments[operation.resource.id_argument],
                    user=ctx.user,
                    arguments=arguments,
                    via=Interface.MCP,
                    represent=ctx.represent_full,
                    idempotency_key=key,
                    request=ctx.request,
                )
            elif operation.is_create:
                # A create operation (docs/protocol.md#execution): same path, no object, no state.
                outcome = execution.perform_create(
                    operation=operation,
                    user=ctx.user,
                    arguments=arguments,
                    via=Interface.MCP,
                    represent=ctx.represent_full,
                    idempotency_key=key,
                    request=ctx.request,
                )
            else:
                return tool_result(reads.read(ctx, operation, arguments))
        except Problem as problem:
            body = ctx.shaped(problem.as_dict(include_current=ctx.problem_current))
            return tool_result(body, is_error=True)
        except confirmations.Refused as refused:
            return tool_result(refused.body, is_error=True)
        return tool_result(ctx.shaped(outcome.body), replayed=outcome.replayed)

    def _ask_or_resume(
        self,
        ctx: Context,
        operation: Operation,
        arguments: dict[str, Any],
        key: str | None,
        meta: dict[str, Any],
    ) -> dict[str, Any] | None:
        """A call that needs the person (docs/protocol.md#confirmations): the answer to the
        form it was given, or the form (a refusal where the client cannot show one); None
        for a call that runs as it is."""
        if ctx.request_state is not None or ctx.input_responses is not None:
            outcome = confirmations.resume(
                ctx, operation, arguments, key, ctx.request_state, ctx.input_responses
            )
            return tool_result(ctx.shaped(outcome.body), replayed=outcome.replayed)
        if operation.resource.id_argument not in arguments:
            return None  # nothing to ask about: the schema's check says what is missing
        if key is not None and idempotency.completed(user=ctx.user, key=key):
            return None  # a replay of what ran: the record answers, as on every face
        missing = confirmations.missing_inputs(operation, arguments)
        elicit = confirmations.can_elicit(ctx, meta)
        if not operation.confirmation_required and not (missing and elicit):
            return None
        # The inputs that are there are checked as always before anyone is asked.
        errors = {
            name: messages
            for name, messages in schema_errors(operation.input_schema, arguments).items()
            if name not in missing
        }
        if errors:
            raise Problem.validation(errors)
        return confirmations.confirm(ctx, operation, arguments, missing, elicit=elicit)
