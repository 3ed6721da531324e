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
import copy
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import close_old_connections

from affordances import capabilities, events, reads
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
        # Not its representation: nothing of it is sent, and what rendering it keeps for
        # the request (the caller's lists, URL templates) would stay as long as the stream.
        resource, pk, _ = resources.find_resource(ctx, uri)
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
    # The stream keeps the request (the registration's QUERYSET is given it) and who the
    # caller is, not this context: a thousand idle streams must hold little.
    listener = _Listener(ctx.request, ctx.user.pk)
    return _stream(listener, targets, tools, honored, request_id, broker)


@dataclass(frozen=True)
class _Listener:
    request: Any
    user_pk: Any


def _visible(user: Any, listener: _Listener, target: _Target) -> bool | None:
    """Whether ``user`` (the caller as it is now, or None if gone) may see the object."""
    if user is None or not getattr(user, "is_active", True):
        return None
    # The one read path's objects for this caller (its QUERYSET, given the request), asked
    # only whether the object is among them: no row to read, no columns to convert.
    try:
        pk = target.resource.parse_pk(target.pk)
    except Problem:
        return False
    request = _as_now(listener.request, user)
    return bool(reads.visible(target.resource, user, request=request).filter(pk=pk).exists())


def _as_now(request: Any, user: Any) -> Any:
    """The stream's request with the caller as they are now. A project's ``QUERYSET``
    may read ``request.user`` rather than its ``user`` argument: the request kept since
    the stream opened holds the user of that moment (and the permissions Django cached on
    it), so a demotion would not be seen. A shallow copy: the kept request is shared by
    the stream's later checks and is not changed."""
    if request is None:
        return None
    now = copy.copy(request)
    # A DRF Request's ``user`` setter also writes the wrapped HttpRequest (shared with
    # the original): give the copy a wrapped request of its own first.
    wrapped = getattr(now, "_request", None)
    if wrapped is not None:
        now._request = copy.copy(wrapped)
    now.user = user
    return now


def _still_visible(checks: list[tuple[_Listener, _Target]]) -> list[bool | Exception | None]:
    """For each stream that heard an event, whether its caller, as it is now, may see the
    object: the callers' rows and permissions read again (one query for every caller of
    the batch, then each one's permissions and the object through the one read path).
    None: the caller is gone (deleted or deactivated). An exception is that check's."""
    wanted = {listener.user_pk for listener, _ in checks}
    users = {user.pk: user for user in get_user_model()._default_manager.filter(pk__in=wanted)}
    capabilities.prime_many(users.values())  # their kept permissions: one round trip
    answers: list[bool | Exception | None] = []
    for listener, target in checks:
        try:
            answers.append(_visible(users.get(listener.user_pk), listener, target))
        except Exception as error:  # that stream's to raise; the others go on
            answers.append(error)
    return answers


def _still_visible_in_pool(
    checks: list[tuple[_Listener, _Target]],
) -> list[bool | Exception | None]:
    """:func:`_still_visible` in a thread of the loop's pool, which holds no connection
    between events (as Django's request cycle does for a request's thread)."""
    close_old_connections()
    try:
        return _still_visible(checks)
    finally:
        close_old_connections()


# In the loop's pool, not the request's thread: that one has ended (the transport
# releases it once the stream starts).
_check_all = sync_to_async(_still_visible_in_pool, thread_sensitive=False)


class _Checks:
    """The checks of one event loop's streams, run together.

    An event on an object with a hundred listeners wakes a hundred streams, each wanting
    its caller checked. One call of the pool for all that are waiting — one connection,
    one pass, the callers read in one query — rather than a hundred calls, each opening
    a connection and contending for the pool's few threads: the streams of one event are
    woken in one turn of the loop, so they are all waiting when the call starts.
    """

    def __init__(self) -> None:
        self._waiting: list[tuple[_Listener, _Target, asyncio.Future[bool | None]]] = []
        self._task: asyncio.Task[None] | None = None

    async def check(self, listener: _Listener, target: _Target) -> bool | None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool | None] = loop.create_future()
        self._waiting.append((listener, target, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run())
        return await future

    async def _run(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                answers = await _check_all([(listener, target) for listener, target, _ in batch])
            except Exception as error:  # the database, say: every stream of the batch
                answers = [error] * len(batch)
            for (_, _, future), answer in zip(batch, answers, strict=True):
                if future.done():  # its stream has ended meanwhile
                    continue
                if isinstance(answer, Exception):
                    future.set_exception(answer)
                else:
                    future.set_result(answer)


_checks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Checks] = weakref.WeakKeyDictionary()


def _checks_of_this_loop() -> _Checks:
    loop = asyncio.get_running_loop()
    checks = _checks.get(loop)
    if checks is None:
        checks = _checks[loop] = _Checks()
    return checks


class _Mailbox:
    """The events waiting for one stream: a list, and a future only while the stream
    waits (an ``asyncio.Queue`` was four deques, 3 kB per idle stream)."""

    __slots__ = ("items", "waiter")

    def __init__(self) -> None:
        self.items: list[events.Event | None] = []
        self.waiter: asyncio.Future[None] | None = None

    def put(self, event: events.Event | None) -> None:
        self.items.append(event)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def get(self) -> events.Event | None:
        while not self.items:
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        return self.items.pop(0)


async def _stream(
    listener: _Listener,
    targets: list[_Target],
    tools: bool,
    honored: dict[str, Any],
    request_id: Any,
    broker: Broker,
) -> AsyncIterator[dict[str, Any] | None]:
    meta = {SUBSCRIPTION_ID_KEY: request_id}
    by_topic = {events.object_topic(t.resource.name, t.pk): t for t in targets}
    user_pk = listener.user_pk
    topics = list(by_topic)
    if tools:
        topics += [events.tools_topic(user_pk), events.tools_topic(events.ALL_CALLERS)]
    pending = _Mailbox()

    def deliver(event: events.Event | None) -> None:
        if len(pending.items) >= MAX_PENDING:
            event = None  # a client that stopped reading: the stream ends, as lost
        pending.put(event)

    # Registered before the acknowledgment: everything committed after it is heard.
    unregister = await hub(broker).register(topics, deliver)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_SECONDS
    try:
        yield _notification(
            "notifications/subscriptions/acknowledged", notifications=honored, _meta=meta
        )
        while (remaining := deadline - loop.time()) > 0:
            try:
                # A deadline on this task (not wait_for's task per wait): an idle stream is
                # one parked coroutine.
                async with asyncio.timeout(min(KEEPALIVE_SECONDS, remaining)):
                    event = await pending.get()
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
            visible = await _checks_of_this_loop().check(listener, target)
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
