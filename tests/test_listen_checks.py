"""What a thousand listen streams cost a process (``make bench-listen``): the checks of the
streams one event wakes run together, each caller re-read as it is now; the callers' kept
permissions are read in one round trip; a stream holds no thread of its request.

The streams themselves, served by uvicorn's workers and heard through Redis, are
``demo_tests/test_live.py``'s; these are the pieces, in one process.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import SyncToAsync, ThreadSensitiveContext, sync_to_async
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test import RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from rest_framework.request import Request

from affordances import capabilities
from affordances.catalog import get_catalog
from affordances.mcp import listen
from affordances.mcp.transport.http import _events
from tests.generic import api as ticket_app
from tests.generic.models import Ticket

User = get_user_model()


@pytest.fixture
def tickets(db: None) -> Iterator[Any]:
    models = {"generic.Ticket": ticket_app.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield get_catalog().resource_for(Ticket)


def _check(user_pk: Any, resource: Any, ticket: Ticket) -> tuple[listen._Listener, Any]:
    return listen._Listener(None, user_pk), listen._Target("uri", resource, str(ticket.pk))


# --- each caller as it is now ---------------------------------------------------------------


def test_each_caller_of_a_batch_is_read_again_through_the_one_read_path(tickets: Any) -> None:
    ann = User.objects.create_user("ann")
    root = User.objects.create_superuser("root", password="x")
    left = User.objects.create_user("left", is_active=False)
    gone = User.objects.create_user("gone")
    gone_pk = gone.pk
    gone.delete()
    plain = Ticket.objects.create(assignee="bob")
    secret = Ticket.objects.create(assignee=ticket_app.SECRET)

    checks = [
        _check(ann.pk, tickets, plain),
        _check(ann.pk, tickets, secret),  # hidden from her by the registration's QUERYSET
        _check(root.pk, tickets, secret),
        _check(left.pk, tickets, plain),  # deactivated: gone for good
        _check(gone_pk, tickets, plain),  # deleted
    ]
    with CaptureQueriesContext(connection) as captured:
        answers = listen._still_visible(checks)
    assert answers == [True, False, True, None, None]
    # One query reads every caller of the batch; then one per visible-and-active check.
    users = [q for q in captured.captured_queries if '"auth_user"' in q["sql"]]
    assert len(users) == 1

    # Demoted between two events: the next check says so.
    root.is_superuser = False
    root.save()
    assert listen._still_visible([_check(root.pk, tickets, secret)]) == [False]


def tickets_of_request(user: Any, request: Any) -> Any:
    """A project's QUERYSET that reads ``request.user``, not its ``user`` argument."""
    who = request.user if request is not None else user
    tickets = Ticket.objects.all()
    return tickets if who.is_superuser else tickets.exclude(assignee=ticket_app.SECRET)


def test_a_queryset_reading_request_user_sees_the_caller_as_they_are_now(db: None) -> None:
    registration = {**ticket_app.REGISTRATION, "QUERYSET": f"{__name__}.tickets_of_request"}
    models = {"generic.Ticket": registration}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            resource = get_catalog().resource_for(Ticket)
            root = User.objects.create_superuser("root", password="x")
            secret = Ticket.objects.create(assignee=ticket_app.SECRET)
            # The stream keeps the request it opened with, its user the user of then.
            http = RequestFactory().get("/mcp")
            http.user = root
            kept = Request(http)
            kept.user = root
            check = (
                listen._Listener(kept, root.pk),
                listen._Target("uri", resource, str(secret.pk)),
            )
            assert listen._still_visible([check]) == [True]

            User.objects.filter(pk=root.pk).update(is_superuser=False)
            assert listen._still_visible([check]) == [False]
            assert kept.user is root and http.user is root  # the kept request is unchanged


def test_a_check_that_fails_is_that_streams_alone(tickets: Any, monkeypatch: Any) -> None:
    ann = User.objects.create_user("ann")
    plain = Ticket.objects.create(assignee="bob")
    broken = listen._Target("uri", tickets, "not-a-number")  # its pk does not parse
    answers = listen._still_visible(
        [_check(ann.pk, tickets, plain), (listen._Listener(None, ann.pk), broken)]
    )
    assert answers == [True, False]

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the read path failed")

    monkeypatch.setattr(listen.reads, "visible", fails)
    answers = listen._still_visible([_check(ann.pk, tickets, plain)])
    assert isinstance(answers[0], RuntimeError)


# --- one call for the streams one event wakes -----------------------------------------------


def test_the_streams_one_event_wakes_are_checked_in_one_call(monkeypatch: Any) -> None:
    calls: list[list[Any]] = []

    async def check_all(checks: list[Any]) -> list[Any]:
        calls.append(checks)
        await asyncio.sleep(0.01)  # the pool's call takes a while: more may arrive
        return [None if target == "gone" else target != "hidden" for _, target in checks]

    monkeypatch.setattr(listen, "_check_all", check_all)

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        checks = listen._Checks()
        # Thirty streams woken in one turn of the loop, as the hub wakes them.
        first = await asyncio.gather(
            *(checks.check(listen._Listener(None, n), "visible") for n in range(29)),
            checks.check(listen._Listener(None, 29), "hidden"),
        )
        # Arriving while a call runs: the next call takes them together.
        running = asyncio.ensure_future(checks.check(listen._Listener(None, 30), "visible"))
        await asyncio.sleep(0)
        later = await asyncio.gather(
            checks.check(listen._Listener(None, 31), "gone"),
            checks.check(listen._Listener(None, 32), "visible"),
        )
        return first, [await running], later

    first, running, later = asyncio.run(scenario())
    assert first == [True] * 29 + [False]
    assert running == [True] and later == [None, True]
    assert [len(batch) for batch in calls] == [30, 1, 2]


def test_a_failed_call_fails_each_waiting_check_and_the_next_call_runs(monkeypatch: Any) -> None:
    failing = True

    async def check_all(checks: list[Any]) -> list[Any]:
        if failing:
            raise ConnectionError("the database went away")
        return [RuntimeError("this one") if t == "bad" else True for _, t in checks]

    monkeypatch.setattr(listen, "_check_all", check_all)

    async def scenario() -> list[Any]:
        nonlocal failing
        checks = listen._Checks()
        failed = await asyncio.gather(
            checks.check(listen._Listener(None, 1), "a"),
            checks.check(listen._Listener(None, 2), "b"),
            return_exceptions=True,
        )
        failing = False
        return failed + list(
            await asyncio.gather(
                checks.check(listen._Listener(None, 3), "bad"),
                checks.check(listen._Listener(None, 4), "good"),
                return_exceptions=True,
            )
        )

    answers = asyncio.run(scenario())
    assert [type(answer).__name__ for answer in answers] == [
        "ConnectionError",
        "ConnectionError",
        "RuntimeError",
        "bool",
    ]


# --- the callers' kept permissions, in one round trip ---------------------------------------


@pytest.fixture
def cached(tmp_path: Path) -> Iterator[None]:
    with override_settings(
        CACHES={
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
            "capabilities": {
                "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
                "LOCATION": str(tmp_path / "cache"),
            },
        },
        AUTHENTICATION_BACKENDS=["affordances.capabilities.CachedModelBackend"],
        AFFORDANCES={**django_settings.AFFORDANCES, "CAPABILITIES_CACHE": "capabilities"},
    ):
        assert capabilities.setup().on
        yield


def _permission_queries(captured: CaptureQueriesContext) -> int:
    return sum('"auth_permission"' in q["sql"] for q in captured.captured_queries)


def test_prime_many_answers_kept_permissions_without_a_query(db: None, cached: None) -> None:
    permission = Permission.objects.get(
        content_type__app_label="generic", codename="escalate_ticket"
    )
    group = Group.objects.create(name="escalators")
    group.permissions.add(permission)
    ann, bob = User.objects.create_user("ann"), User.objects.create_user("bob")
    ann.groups.add(group)
    assert User.objects.get(pk=ann.pk).has_perm("generic.escalate_ticket")  # now kept

    fresh_ann, fresh_bob = User.objects.get(pk=ann.pk), User.objects.get(pk=bob.pk)
    with CaptureQueriesContext(connection) as primed:
        capabilities.prime_many([fresh_ann, fresh_bob])
    assert len(primed.captured_queries) == 0
    with CaptureQueriesContext(connection) as asked:
        assert fresh_ann.has_perm("generic.escalate_ticket")
    assert _permission_queries(asked) == 0  # answered from what was primed
    with CaptureQueriesContext(connection) as asked:
        assert not fresh_bob.has_perm("generic.escalate_ticket")
    assert _permission_queries(asked) == 2  # nothing kept for him: loaded, as always

    # Revoked: what is kept is stale, and priming does not revive it.
    ann.groups.remove(group)
    stale = User.objects.get(pk=ann.pk)
    capabilities.prime_many([stale])
    assert not stale.has_perm("generic.escalate_ticket")


def test_prime_many_does_nothing_without_the_shared_cache(db: None) -> None:
    assert not capabilities.setup().on
    ann = User.objects.create_user("ann")
    capabilities.prime_many([ann])
    assert capabilities._MEMO not in vars(ann)


# --- a stream holds no thread of its request ------------------------------------------------


async def _one_message() -> AsyncIterator[dict[str, Any] | None]:
    yield {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged"}


def _thread_name() -> str:
    return threading.current_thread().name


def test_a_stream_ends_the_thread_django_keeps_for_its_request() -> None:
    async def scenario() -> tuple[str, bool, str, bytes]:
        # What Django's ASGI handler does around every request.
        async with ThreadSensitiveContext():
            before = await sync_to_async(_thread_name)()  # the request's sync code
            context = SyncToAsync.thread_sensitive_context.get()
            executor = SyncToAsync.context_to_thread_executor[context]
            stream = _events(_one_message())
            first = await stream.__anext__()  # the response starts
            ended = context not in SyncToAsync.context_to_thread_executor
            ended = ended and bool(getattr(executor, "_shutdown", True))
            # Sync code later in the request (Django closes the response) still runs.
            after = await sync_to_async(_thread_name)()
            await stream.aclose()
        return before, ended, after, first

    before, ended, after, first = asyncio.run(scenario())
    assert first.startswith(b"event: message\ndata: ")
    assert ended
    assert after != before  # a thread afresh, ended with the request


@pytest.mark.skipif(
    "executor" not in inspect.signature(ThreadSensitiveContext).parameters,
    reason="asgiref before 3.10 takes no executor",
)
def test_an_executor_the_project_gave_the_context_is_left_alone() -> None:
    async def scenario() -> bool:
        with ThreadPoolExecutor(max_workers=1) as own:
            async with ThreadSensitiveContext(executor=own):  # type: ignore[call-arg]
                await sync_to_async(_thread_name)()
                stream = _events(_one_message())
                await stream.__anext__()
                await stream.aclose()
                return bool(getattr(own, "_shutdown", False))

    assert asyncio.run(scenario()) is False
