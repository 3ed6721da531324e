"""The catalog as an MCP application: one :class:`Server` per profile.

Binds the generic transport to the catalog faces: ``tools/*`` go to the profile's tool
set, ``resources/*`` to the registered models. Translates; decides nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol

from affordances import brokers, memo, tracing
from affordances.caches import cached
from affordances.mcp import authorization, listen, resources
from affordances.mcp.context import Context
from affordances.mcp.forms_profile import FormsTools
from affordances.mcp.profiles import Profile, ToolSetKind
from affordances.mcp.tools import CatalogTools
from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError
from affordances.mcp.transport.pagination import decode, page
from affordances.mcp.transport.protocol import CacheHint
from affordances.mcp.transport.server import Call, Method, Server, StreamMethod

__all__ = ["ToolSet", "server_for"]


class ToolSet(Protocol):
    """The tools of a profile: list them for a caller, call one by name."""

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        """The caller's tools, in a deterministic order; never a function of state."""
        ...

    def list_key(self, ctx: Context) -> Hashable:
        """Everything :meth:`list_tools` depends on for this caller (the list is built
        once per key and process)."""
        ...

    def call_tool(
        self, ctx: Context, name: str, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> dict[str, Any]:
        """A ``CallToolResult``; unknown or forbidden names raise -32602 alike."""
        ...


def _package_version() -> str:
    try:
        return version("django-affordances")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0.0.0"


# The installed distribution's: fixed for the process.
PACKAGE_VERSION = _package_version()


def _context(profile: Profile, call: Call) -> Context:
    return Context(
        request=call.request,
        user=call.user,
        revision=call.revision,
        affordances=profile.affordances,
        compact=profile.compact,
        problem_current=profile.problem_current,
        resources=profile.resources,
        page_size=profile.page_size,
    )


def _tool_set(profile: Profile) -> ToolSet:
    return FormsTools() if profile.tools is ToolSetKind.FORMS else CatalogTools()


def _read_only(tools: ToolSet, ctx: Context, name: str) -> bool:
    """Whether the caller's tool ``name`` says it is read-only (its ``readOnlyHint``); a
    name that is none of the caller's tools is left to ``call_tool`` to refuse."""
    for tool in tools.list_tools(ctx):
        if tool.get("name") == name:
            return bool((tool.get("annotations") or {}).get("readOnlyHint"))
    return True


# Keyed by the profiles the URLconf mounts (a handful, from code): one small object each,
# forgotten with everything else derived from settings (affordances.registry).
@cached("mcp servers", keys="profile", max_entries=16)
def server_for(profile: Profile) -> Server:
    """One server per profile and process; it keeps no per-request state."""
    tools = _tool_set(profile)

    def bound(handler: Callable[[Context, dict[str, Any]], dict[str, Any]]) -> Any:
        def handle(call: Call, params: dict[str, Any]) -> dict[str, Any]:
            # The caller's trace, continued once per request: the message's `_meta`
            # (traceparent, tracestate, baggage), else the HTTP request's headers.
            meta = params.get("_meta")
            with tracing.continued(
                message=meta if isinstance(meta, dict) else None,
                headers=getattr(call.request, "headers", None),
            ):
                return handler(_context(profile, call), params)

        return handle

    def tools_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        items, following = page(
            tools.list_tools(ctx), params.get("cursor"), kind="tools", size=profile.page_size
        )
        return {"tools": items, **({"nextCursor": following} if following else {})}

    def tools_call(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "name" must be a string.')
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object.')
        # A token's scopes narrow: a tool that is not read-only needs the write scope.
        authorization.check_tool(ctx.request, lambda: _read_only(tools, ctx, name))
        meta = params.get("_meta")
        if ctx.revision.modern:  # the multi-round-trip members exist from 2026-07-28 on
            ctx.input_responses = params.get("inputResponses")
            ctx.request_state = params.get("requestState")
        return tools.call_tool(ctx, name, arguments, meta if isinstance(meta, dict) else {})

    def templates_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        items, following = page(
            resources.list_templates(ctx),
            params.get("cursor"),
            kind="templates",
            size=profile.page_size,
        )
        return {"resourceTemplates": items, **({"nextCursor": following} if following else {})}

    # Per caller (the tools are the caller's catalog), fresh for a deployment's lifetime.
    listing = CacheHint(profile.list_ttl_ms, "private")

    def tools_list_key(call: Call, params: dict[str, Any]) -> Hashable:
        # The offset, not the cursor's text: validated, one key per page.
        offset = decode(params.get("cursor"), "tools")
        return (profile, tools.list_key(_context(profile, call)), offset)

    methods = {
        "tools/list": Method(bound(tools_list), listing, memo_key=tools_list_key),
        "tools/call": Method(bound(tools_call)),
    }
    capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
    if profile.resources:
        capabilities["resources"] = {"subscribe": False, "listChanged": False}
        methods["resources/templates/list"] = Method(
            bound(templates_list), CacheHint(profile.list_ttl_ms, "public")
        )
        # Objects change with every transition: never fresh, and per caller.
        methods["resources/list"] = Method(
            bound(lambda ctx, params: resources.list_resources(ctx, params.get("cursor"))),
            CacheHint(0, "private"),
        )
        methods["resources/read"] = Method(
            bound(lambda ctx, params: resources.read_resource(ctx, params.get("uri"))),
            CacheHint(0, "private"),
        )
    # subscriptions/listen, where a broker carries the events (and, the transport decides,
    # where the deployment streams: ASGI).
    broker = brokers.get_broker()
    streams: dict[str, StreamMethod] = {}
    streaming_capabilities: dict[str, dict[str, Any]] = {}
    if broker is not None:
        streams["subscriptions/listen"] = StreamMethod(
            lambda call, params, request_id: listen.open_stream(
                _context(profile, call), params, request_id, broker
            )
        )
        streaming_capabilities["tools"] = {"listChanged": True}
        if profile.resources:
            streaming_capabilities["resources"] = {"subscribe": True}
    return Server(
        streams=streams,
        streaming_capabilities=streaming_capabilities,
        not_streaming=(
            "subscriptions/listen is served on an ASGI deployment with an events broker "
            "(AFFORDANCES['EVENTS_BROKER']); this one answers plain JSON only."
        ),
        server_info={
            "name": "django-affordances",
            "title": profile.title,
            "version": PACKAGE_VERSION,
        },
        capabilities=capabilities,
        instructions=profile.instructions,
        methods=methods,
        discover_ttl_ms=profile.list_ttl_ms,
        # The app's bounded memo, as every face's (forgotten with the catalog).
        memoize=lambda key, build: memo.memoized(key, build, size=len),
    )
