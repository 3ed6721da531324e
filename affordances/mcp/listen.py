"""``subscriptions/listen`` (MCP 2026-07-28): a caller told when an object or its tools change.

The request names what to hear — ``resourceSubscriptions`` (the URIs of objects, as
``resources/read`` takes them) and ``toolsListChanged`` — and its response is a stream:
the acknowledgment of what is honoured, then ``notifications/resources/updated`` and
``notifications/tools/list_changed`` as runs commit anywhere (:mod:`affordances.events`,
through the broker to every process), keep-alives while nothing happens, and the
``SubscriptionsListenResult`` when the server ends the stream on purpose (after
:data:`MAX_SECONDS`, or when its caller is deactivated or deleted).

What a caller learns is what it may see. Every subscribed object is looked up as
``resources/read`` looks it up: one the caller may not see is refused exactly like a
missing one, before any stream opens. And each notification is sent only after the
object is read again through the one read path for the caller as it is now (its
permissions re-read): an object that became invisible is never heard about again.

Served on an ASGI deployment with a broker configured (``AFFORDANCES["EVENTS_BROKER"]``);
a WSGI deployment answers "Method not found" with the reason, and its capabilities say
``subscribe: false``/``listChanged: false`` (affordances.mcp.transport.server).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import close_old_connections

from affordances import events
from affordances.brokers import Broker
from affordances.hub import hub
from affordances.mcp import resources
from affordances.mcp.context import Context
from affordances.mcp.transport.jsonrpc import INVALID_PARAMS, JsonRpcError
from affordances.problems import Problem
from affordances.resources import Resource

__all__ = ["KEEPALIVE_SECONDS", "MAX_SECONDS", "MAX_URIS", "open_stream"]

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
# The object's new version, beside the URI: a client holding that version need not read.
VERSION_KEY = "affordances/version"

#: Seconds between keep-alives of an idle stream (proxies close idle connections).
KEEPALIVE_SECONDS = 15.0
#: Seconds after which a stream is closed gracefully: its client listens again, with
#: credentials checked again (a stream must not outlive its access token by much).
MAX_SECONDS = 3600.0
#: Objects one stream may subscribe to.
MAX_URIS = 100
#: Events waiting to be sent before a stream whose client stopped reading is ended.
MAX_PENDING = 256


@dataclass(frozen=True)
class _Target:
    uri: str
    resource: Resource
    pk: str


def _targets(ctx: Context, uris: Any) -> list[_Target]:
    if uris is None:
        return []
    if not isinstance(uris, list) or not all(isinstance(uri, str) and uri for uri in uris):
        raise JsonRpcError(
            INVALID_PARAMS, 'Invalid params: "resourceSubscriptions" must be a list of URIs.'
        )
    if len(uris) > MAX_URIS:
        raise JsonRpcError(
            INVALID_PARAMS, f"Invalid params: at most {MAX_URIS} resourceSubscriptions."
        )
    targets = []
    for uri in dict.fromkeys(uris):
        # Exactly resources/read's lookup and answer: hidden and missing look the same.
        resources.read_resource(ctx, uri)
        located = resources.locate(uri)
        assert located is not None
        resource, pk = located
        targets.append(_Target(uri, resource, str(pk)))
    return targets


def open_stream(
    ctx: Context, params: dict[str, Any], request_id: Any, broker: Broker
) -> AsyncIterator[dict[str, Any] | None]:
    """Check the request (raising its JSON-RPC errors now) and return its stream."""
    notifications = params.get("notifications")
    if not isinstance(notifications, dict):
        raise JsonRpcError(INVALID_PARAMS, 'Invalid params: "notifications" must be an object.')
    targets = _targets(ctx, notifications.get("resourceSubscriptions")) if ctx.resources else []
    tools = notifications.get("toolsListChanged") is True
    # The honoured subset: what this server publishes (no prompts; no resource-list
    # changes — every object is its own resource, and lists are read, not followed).
    honored: dict[str, Any] = {}
    if tools:
        honored["toolsListChanged"] = True
    if targets:
        honored["resourceSubscriptions"] = [target.uri for target in targets]
    return _stream(ctx, targets, tools, honored, request_id, broker)


def _still_visible(ctx: Context, user_pk: Any, target: _Target) -> bool | None:
    """Whether the caller, as it is now, may see the object: its row and permissions read
    again. None: the caller is gone (deleted or deactivated)."""
    close_old_connections()
    user = get_user_model()._default_manager.filter(pk=user_pk).first()
    if user is None or not getattr(user, "is_active", True):
        return None
    fresh = Context(request=ctx.request, user=user, revision=ctx.revision)
    try:
        fresh.find(target.resource, target.pk)
    except Problem:
        return False
    return True


async def _stream(
    ctx: Context,
    targets: list[_Target],
    tools: bool,
    honored: dict[str, Any],
    request_id: Any,
    broker: Broker,
) -> AsyncIterator[dict[str, Any] | None]:
    meta = {SUBSCRIPTION_ID_KEY: request_id}
    by_topic = {events.object_topic(t.resource.name, t.pk): t for t in targets}
    user_pk = ctx.user.pk
    topics = list(by_topic)
    if tools:
        topics += [events.tools_topic(user_pk), events.tools_topic(events.ALL_CALLERS)]
    pending: asyncio.Queue[events.Event | None] = asyncio.Queue()

    def deliver(event: events.Event | None) -> None:
        if pending.qsize() >= MAX_PENDING:
            event = None  # a client that stopped reading: the stream ends, as lost
        pending.put_nowait(event)

    # Registered before the acknowledgment: everything committed after it is heard.
    unregister = await hub(broker).register(topics, deliver)
    check = sync_to_async(_still_visible, thread_sensitive=False)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_SECONDS
    try:
        yield _notification(
            "notifications/subscriptions/acknowledged", notifications=honored, _meta=meta
        )
        while (remaining := deadline - loop.time()) > 0:
            try:
                event = await asyncio.wait_for(pending.get(), min(KEEPALIVE_SECONDS, remaining))
            except TimeoutError:
                if deadline - loop.time() > 0:
                    yield None
                continue
            if event is None:
                return  # the broker is lost: an abrupt end, the client listens again
            if isinstance(event, events.ToolsChanged):
                yield _notification("notifications/tools/list_changed", _meta=meta)
                continue
            target = by_topic.get(event.topic)
            if target is None:
                continue
            visible = await check(ctx, user_pk, target)
            if visible is None:
                break  # the caller is gone: closed, and it cannot listen again
            if visible:
                stamped = {**meta, VERSION_KEY: event.version} if event.version else meta
                yield _notification(
                    "notifications/resources/updated", uri=target.uri, _meta=stamped
                )
        yield {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"resultType": "complete", "_meta": meta},
        }
    finally:
        unregister()


def _notification(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}
