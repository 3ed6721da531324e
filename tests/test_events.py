"""Publish on commit: every committed run says "this object changed" through the
configured broker, a rolled-back one says nothing; permission changes say "your tools
changed"; the brokers carry messages to the streams of their process (in-process) or of
every process (Redis)."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.test import override_settings

from affordances import brokers, events
from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.hub import hub
from affordances.problems import Problem
from tests.generic import api as generic_api
from tests.generic.models import Ticket


class RecordingBroker:
    """A broker that keeps what is published (the sink; publishing is what is tested)."""

    shared = False
    published: ClassVar[list[events.Event | None]] = []

    def publish(self, topic: str, payload: bytes) -> None:
        event = events.decode(payload)
        assert event is not None and event.topic == topic
        self.published.append(event)


@pytest.fixture
def published(db: None) -> Iterator[list[events.Event | None]]:
    models = {"generic.Ticket": generic_api.REGISTRATION}
    broker = {"BACKEND": "tests.test_events.RecordingBroker"}
    affordances = {**django_settings.AFFORDANCES, "MODELS": models, "EVENTS_BROKER": broker}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(generic_api)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            RecordingBroker.published.clear()
            yield RecordingBroker.published
            RecordingBroker.published.clear()


def _root() -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


def _close(ticket: Ticket, user: Any) -> None:
    perform(
        operation=get_catalog().lookup("close_ticket"),
        pk=ticket.pk,
        user=user,
        arguments={},
        via="api",
        represent=lambda instance: {"id": instance.pk},
    )


def test_a_committed_run_publishes_its_object_and_new_version(
    published, django_capture_on_commit_callbacks
):
    ticket = Ticket.objects.create(assignee="ann")
    root = _root()
    published.clear()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        _close(ticket, root)
    assert published == []  # nothing before the commit
    for callback in callbacks:
        callback()
    assert published == [events.ObjectChanged("ticket", str(ticket.pk), 2)]


def test_a_refused_or_failed_run_publishes_nothing(published, django_capture_on_commit_callbacks):
    ticket = Ticket.objects.create(assignee="")  # not assigned: close is refused
    root = _root()
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(Problem):
            _close(ticket, root)
        with pytest.raises(Problem):  # the body raises after changing the object
            perform(
                operation=get_catalog().lookup("explode_ticket"),
                pk=ticket.pk,
                user=root,
                arguments={},
                via="api",
                represent=lambda instance: {"id": instance.pk},
            )
    assert published == []


def test_a_run_inside_a_transaction_rolled_back_publishes_nothing(
    published, django_capture_on_commit_callbacks
):
    ticket = Ticket.objects.create(assignee="ann")
    root = _root()
    published.clear()
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        _close(ticket, root)
        raise RuntimeError("the caller's own transaction fails after the run")
    assert published == []
    assert Ticket.objects.get(pk=ticket.pk).state == "open"


def test_a_permission_change_publishes_that_callers_tools(
    published, django_capture_on_commit_callbacks
):
    user = get_user_model().objects.create_user("ann", password="x")
    group = Group.objects.create(name="escalators")
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        user.groups.add(group)
    assert published == [events.ToolsChanged(str(user.pk))]
    published.clear()
    with django_capture_on_commit_callbacks(execute=True):
        group.permissions.add(Permission.objects.get(codename="escalate_ticket"))
    assert published == [events.ToolsChanged(events.ALL_CALLERS)]


def test_no_broker_publishes_nothing_and_costs_nothing(db, django_capture_on_commit_callbacks):
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "EVENTS_BROKER": None}):
        assert brokers.get_broker() is None
        with django_capture_on_commit_callbacks(execute=True):
            events.tools_changed(1)  # published to nobody, without an error


@pytest.mark.parametrize("body", [b"", b"{}", b'{"kind":"object"}', b"[1]", b"\xff"])
def test_a_malformed_message_decodes_to_nothing(body):
    assert events.decode(body) is None


def _hear(broker: brokers.Broker, topic: str, publish: list[tuple[str, bytes]]) -> list[Any]:
    """Register for ``topic`` on a hub of ``broker``, publish from another thread, and
    return what the hub delivered."""
    heard: list[Any] = []

    async def scenario() -> None:
        arrived = asyncio.Event()

        def deliver(event: Any) -> None:
            heard.append(event)
            arrived.set()

        unregister = await hub(broker).register([topic], deliver)
        sender = threading.Thread(target=lambda: [broker.publish(*m) for m in publish])
        sender.start()
        sender.join()
        await asyncio.wait_for(arrived.wait(), 5)
        await asyncio.sleep(0.1)  # anything else published would have arrived by now
        unregister()

    asyncio.run(scenario())
    return heard


def test_the_in_process_broker_delivers_a_topic_to_its_registered_stream():
    event = events.ObjectChanged("ticket", "7", 3)
    other = events.ObjectChanged("ticket", "8", 2)
    heard = _hear(
        brokers.InProcessBroker(),
        event.topic,
        [(other.topic, events.encode(other)), (event.topic, events.encode(event))],
    )
    assert heard == [event]


def _redis_up() -> bool:
    try:
        import redis

        return bool(redis.Redis(socket_connect_timeout=0.5).ping())
    except Exception:
        return False


@pytest.mark.skipif(not _redis_up(), reason="no Redis on 127.0.0.1:6379")
def test_the_redis_broker_delivers_what_another_connection_publishes():
    channel = f"affordances-test-{threading.get_ident()}"
    event = events.ToolsChanged("42")
    # Published through a broker of its own (its own connection: another process's, as
    # it were), once the listener's subscription is confirmed.
    publisher = brokers.RedisBroker(channel=channel)
    listener = brokers.RedisBroker(channel=channel)
    heard: list[Any] = []

    async def scenario() -> None:
        arrived = asyncio.Event()

        def deliver(item: Any) -> None:
            heard.append(item)
            arrived.set()

        unregister = await hub(listener).register([event.topic], deliver)
        await asyncio.to_thread(publisher.publish, event.topic, events.encode(event))
        await asyncio.wait_for(arrived.wait(), 5)
        unregister()

    asyncio.run(scenario())
    assert heard == [event]
