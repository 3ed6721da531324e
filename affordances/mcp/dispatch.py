"""One JSON-RPC dispatcher for every MCP endpoint; a :class:`Profile` says what it offers.

The dispatcher translates and decides nothing: lifecycle methods answer from the
profile, ``tools/*`` go to the profile's tool set, ``resources/*`` to the registered
models. It holds no state between requests: the revision, the caller and everything
else come from the request at hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from rest_framework.request import Request

from affordances.mcp import pagination, resources
from affordances.mcp.context import Context
from affordances.mcp.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcError,
    Message,
    error_response,
    result_response,
)
from affordances.mcp.profiles import Profile
from affordances.mcp.protocol import (
    HANDSHAKE_VERSIONS,
    SUPPORTED_VERSIONS,
    CacheHint,
    Revision,
    negotiate,
    resolve,
)

__all__ = ["Dispatcher", "Reply", "dispatcher_for"]

Handler = Callable[[Context, dict[str, Any]], dict[str, Any]]


@cache
def _package_version() -> str:
    try:
        return version("django-affordances")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0.0.0"


@dataclass(frozen=True)
class Reply:
    """An HTTP answer to one message: a JSON-RPC envelope, or none (202)."""

    status: int
    body: dict[str, Any] | None = None


class Dispatcher:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    @cached_property
    def server_info(self) -> dict[str, Any]:
        return {
            "name": "django-affordances",
            "title": self.profile.title,
            "version": _package_version(),
        }

    @cached_property
    def capabilities(self) -> dict[str, Any]:
        # The catalog changes with deployments only: nothing to notify about.
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}}
        if self.profile.resources:
            capabilities["resources"] = {"subscribe": False, "listChanged": False}
        return capabilities

    def handlers(self, revision: Revision) -> dict[str, tuple[Handler, CacheHint | None]]:
        """The methods this revision may call, with the cache hint of their results."""
        listing = CacheHint(self.profile.list_ttl_ms, "private")
        table: dict[str, tuple[Handler, CacheHint | None]] = {
            "tools/list": (self._tools_list, listing),
            "tools/call": (self._tools_call, None),
        }
        if self.profile.resources:
            table["resources/templates/list"] = (
                self._templates_list,
                CacheHint(self.profile.list_ttl_ms, "public"),
            )
            # Objects change with every transition: never fresh, and per caller.
            table["resources/list"] = (self._resources_list, CacheHint(0, "private"))
            table["resources/read"] = (self._resources_read, CacheHint(0, "private"))
        if revision.modern:
            table["server/discover"] = (
                self._discover,
                CacheHint(self.profile.list_ttl_ms, "public"),
            )
        else:
            table["ping"] = (lambda ctx, params: {}, None)
        return table

    def dispatch(
        self, message: Message, *, headers: Mapping[str, str], request: Request, user: Any
    ) -> Reply:
        if message.kind != "request":
            # Notifications (notifications/initialized, cancelled, …) and stray responses:
            # accepted, nothing to do for a stateless server.
            return Reply(202)
        assert message.id is not None
        revision: Revision | None = None
        try:
            if message.method == "initialize":
                return Reply(200, result_response(message.id, self._initialize(message.params)))
            revision = resolve(message, headers)
            entry = self.handlers(revision).get(message.method or "")
            if entry is None:
                raise JsonRpcError(METHOD_NOT_FOUND, "Method not found")
            handler, cache = entry
            ctx = Context(request=request, user=user, profile=self.profile, revision=revision)
            result = revision.dress(
                handler(ctx, message.params), server_info=self.server_info, cache=cache
            )
            return Reply(200, result_response(message.id, result))
        except JsonRpcError as error:
            # Before a revision is known (initialize), handshake-era statuses apply.
            status = (revision or Revision(HANDSHAKE_VERSIONS[0])).status_for(error)
            return Reply(status, error_response(message.id, error))

    # --- lifecycle ------------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise JsonRpcError(
                INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string.'
            )
        return {
            "protocolVersion": negotiate(requested),
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
            "instructions": self.profile.instructions,
        }

    def _discover(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities,
            "instructions": self.profile.instructions,
        }

    # --- tools ----------------------------------------------------------------------

    def _tools_list(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        tools, following = pagination.page(
            self.profile.tools.list_tools(ctx),
            params.get("cursor"),
            kind="tools",
            size=self.profile.page_size,
        )
        result: dict[str, Any] = {"tools": tools}
        if following is not None:
            result["nextCursor"] = following
        return result

    def _tools_call(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "name" must be a string.')
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object.')
        meta = params.get("_meta")
        return self.profile.tools.call_tool(
            ctx, name, arguments, meta if isinstance(meta, dict) else {}
        )

    # --- resources ------------------------------------------------------------------

    def _templates_list(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        templates, following = pagination.page(
            resources.list_templates(ctx),
            params.get("cursor"),
            kind="templates",
            size=self.profile.page_size,
        )
        result: dict[str, Any] = {"resourceTemplates": templates}
        if following is not None:
            result["nextCursor"] = following
        return result

    def _resources_list(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        return resources.list_resources(ctx, params.get("cursor"))

    def _resources_read(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        return resources.read_resource(ctx, params.get("uri"))


@cache
def dispatcher_for(profile: Profile) -> Dispatcher:
    """One dispatcher per profile and process; it keeps no per-request state."""
    return Dispatcher(profile)
