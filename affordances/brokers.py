"""Where published events travel: in one process, or to every process through Redis.

``AFFORDANCES["EVENTS_BROKER"]`` names one::

    "EVENTS_BROKER": {"BACKEND": "affordances.brokers.InProcessBroker"}   # the default
    "EVENTS_BROKER": {
        "BACKEND": "affordances.brokers.RedisBroker",
        "OPTIONS": {"url": "redis://127.0.0.1:6379/0"},
    }
    "EVENTS_BROKER": None   # nothing published, no stream served

A broker has two sides. :meth:`Broker.publish` is synchronous and called from any thread
(a run's ``on_commit``); :meth:`Broker.messages` is an async iterator of every message
published anywhere the broker reaches, read once per process and event loop by
:class:`affordances.hub.Hub`, which fans them out to the streams open in that process —
so a thousand listeners cost one Redis connection, not a thousand.

The in-process broker reaches the event loops of its own process only: right for
``runserver`` and a one-process server, and wrong for several workers, where a run
served by one worker would not be heard by a listener on another (``check`` says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from functools import cache
from typing import Any, Protocol

from django.utils.module_loading import import_string

from affordances import registry
from affordances.conf import settings

__all__ = ["Broker", "InProcessBroker", "RedisBroker", "get_broker"]

logger = logging.getLogger(__name__)


class Broker(Protocol):
    #: Whether every process of a deployment hears what one publishes.
    shared: bool

    def publish(self, topic: str, payload: bytes) -> None:
        """Send one message; called from any thread, returns without waiting for
        listeners."""
        ...

    def messages(self, ready: asyncio.Event) -> AsyncIterator[tuple[str, bytes]]:
        """Every message published from now on, as ``(topic, payload)``; ``ready`` is
        set once nothing published after it can be missed."""
        ...


class InProcessBroker:
    """Messages to the event loops of this process (development, one-process servers)."""

    shared = False

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]] = {}

    def publish(self, topic: str, payload: bytes) -> None:
        with self._lock:
            targets = list(self._queues.values())
        for loop, queue in targets:
            # RuntimeError: that loop has closed, and its reader with it.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, (topic, payload))

    async def messages(self, ready: asyncio.Event) -> AsyncIterator[tuple[str, bytes]]:
        queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        key = id(queue)
        with self._lock:
            self._queues[key] = (asyncio.get_running_loop(), queue)
        ready.set()
        try:
            while True:
                yield await queue.get()
        finally:
            with self._lock:
                self._queues.pop(key, None)


class RedisBroker:
    """Redis pub/sub on one channel: every process subscribes once and hears every message
    (redis-py, the ``live`` extra). Publishing is fire-and-forget, as pub/sub is: a process
    not subscribed at that instant does not hear it, which is why a stream is acknowledged
    only after its process's subscription is confirmed."""

    shared = True

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", channel: str = "affordances") -> None:
        self.url = url
        self.channel = channel
        self._client: Any = None
        self._lock = threading.Lock()

    def _sync_client(self) -> Any:
        with self._lock:
            if self._client is None:
                import redis  # optional: the ``live`` extra

                # Short timeouts: a publish runs in a request's thread after its commit.
                self._client = redis.Redis.from_url(
                    self.url, socket_connect_timeout=1, socket_timeout=1
                )
            return self._client

    def publish(self, topic: str, payload: bytes) -> None:
        self._sync_client().publish(self.channel, topic.encode() + b"\n" + payload)

    async def messages(self, ready: asyncio.Event) -> AsyncIterator[tuple[str, bytes]]:
        import redis.asyncio

        client = redis.asyncio.Redis.from_url(self.url, socket_connect_timeout=1)
        pubsub = client.pubsub()
        try:
            await pubsub.subscribe(self.channel)
            while True:
                message = await pubsub.get_message(timeout=None)
                if message is None:
                    continue
                if message.get("type") == "subscribe":
                    # SUBSCRIBE confirmed: from now on nothing published is missed.
                    ready.set()
                    continue
                if message.get("type") != "message":
                    continue
                topic, _, payload = bytes(message["data"]).partition(b"\n")
                yield topic.decode(), payload
        finally:
            await pubsub.aclose()
            await client.aclose()


@cache
def get_broker() -> Broker | None:
    """The configured broker of this process (built once), or None when events are off."""
    configured = settings.EVENTS_BROKER
    if configured is None:
        return None
    backend = configured["BACKEND"]
    cls = import_string(backend) if isinstance(backend, str) else backend
    broker: Broker = cls(**configured.get("OPTIONS", {}))
    return broker


registry.derived(get_broker.cache_clear)
