"""One broker subscription per process and event loop, fanned out to its streams by topic.

A stream (an MCP listen stream, the admin's notice) registers the topics it wants with a
callback; :class:`Hub` reads the broker once and calls the callbacks of a message's topic
on the event loop. Registration waits until the broker's subscription is confirmed, so a
stream acknowledged to its client hears everything published after that.

A broker connection that fails ends every stream registered through it (each callback is
called with ``None``): there is no replay, so its clients must listen again and read
again; the next registration opens a new connection.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Iterable

from affordances import events
from affordances.brokers import Broker

__all__ = ["Deliver", "Hub", "hub"]

logger = logging.getLogger(__name__)

# Called with each event of a registered topic, or with None once the hub has failed.
Deliver = Callable[["events.Event | None"], None]


class Hub:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self._topics: dict[str, dict[int, Deliver]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._tokens = 0

    @property
    def listeners(self) -> int:
        return sum(len(callbacks) for callbacks in self._topics.values())

    async def register(self, topics: Iterable[str], deliver: Deliver) -> Callable[[], None]:
        """Call ``deliver`` with every event of ``topics`` until the returned function is
        called; returns once the broker subscription is live."""
        self._tokens += 1
        token = self._tokens
        topics = tuple(dict.fromkeys(topics))
        for topic in topics:
            self._topics.setdefault(topic, {})[token] = deliver
        if self._task is None or self._task.done():
            self._ready = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._read(self._ready))
        await self._ready.wait()

        def unregister() -> None:
            for topic in topics:
                callbacks = self._topics.get(topic)
                if callbacks is not None:
                    callbacks.pop(token, None)
                    if not callbacks:
                        del self._topics[topic]

        return unregister

    async def _read(self, ready: asyncio.Event) -> None:
        try:
            async for topic, payload in self.broker.messages(ready):
                callbacks = self._topics.get(topic)
                if not callbacks:
                    continue
                event = events.decode(payload)
                if event is None:
                    continue
                for deliver in list(callbacks.values()):
                    try:
                        deliver(event)
                    except Exception:  # one stream must not starve the others
                        logger.exception("a listener failed on %s", topic)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("the events broker failed; ending this process's streams")
        # Ended: every registered stream is lost, and waiters must not hang.
        ready.set()
        lost = [deliver for callbacks in self._topics.values() for deliver in callbacks.values()]
        self._topics.clear()
        for deliver in dict.fromkeys(lost):
            try:
                deliver(None)
            except Exception:
                logger.exception("a listener failed on losing the broker")


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def hub(broker: Broker) -> Hub:
    """The hub of ``broker`` on the running event loop."""
    loop = asyncio.get_running_loop()
    current = _hubs.get(loop)
    if current is None or current.broker is not broker:
        current = _hubs[loop] = Hub(broker)
    return current
