"""Live affordances, for real: the demo served by uvicorn with two worker processes and
Redis, driven by the official MCP SDK in 2026-07-28 mode (``Client.listen``).

A listener on an order hears ``notifications/resources/updated`` within a second of
another user's REST transition and of another user's MCP call (served by whichever
worker, published through Redis), and of an admin edit (the change form, by a staff
user) served by another process; a listener on an order it may not see is refused as
for a missing one and hears nothing; ``toolsListChanged`` arrives when the caller's
groups change in another process. Skipped without Redis on 127.0.0.1:6379.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.db import connection
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged

from demo_tests.conftest import DEMO_PASSWORD

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


if not _redis_up():
    pytest.skip("no Redis on 127.0.0.1:6379", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database_url(tmp_path: Path) -> str:
    """The test database, as the server's processes can open it: PostgreSQL's by name,
    SQLite's (in memory) copied to a file."""
    settings = connection.settings_dict
    if connection.vendor == "postgresql":
        user = settings.get("USER") or ""
        host = settings.get("HOST") or "127.0.0.1"
        port = settings.get("PORT") or 5432
        return f"postgres://{user}@{host}:{port}/{settings['NAME']}"
    path = tmp_path / "live.sqlite3"
    connection.ensure_connection()
    target = sqlite3.connect(path)
    connection.connection.backup(target)
    target.close()
    return f"sqlite:///{path}"


class Server:
    def __init__(self, base: str, env: dict[str, str]) -> None:
        self.base = base
        self.env = env

    def token(self, username: str) -> str:
        answer = httpx2.post(
            f"{self.base}/api/token/", json={"username": username, "password": DEMO_PASSWORD}
        )
        answer.raise_for_status()
        return str(answer.json()["access"])

    def manage_shell(self, code: str) -> None:
        """Run ``code`` in a Django shell of its own: another process, as an operator's."""
        subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            timeout=120,
        )


@contextmanager
def _serving(env: dict[str, str], workers: int) -> Iterator[str]:
    """uvicorn with ``workers`` worker processes on a free port of 127.0.0.1, stopped on
    leaving; yields its base URL."""
    port = _free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx2.get(f"{base}/api/", timeout=2).status_code < 500:
                    break
            except httpx2.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start: {process.stderr.read()!r}")
            time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "DJANGO_SETTINGS_MODULE": "demo_tests.settings",
        "DATABASE_URL": _database_url(tmp_path),
        "EVENTS_URL": "redis://127.0.0.1:6379/0",
        # A channel of this run's own: parallel runs must not hear each other's orders.
        "EVENTS_CHANNEL": f"affordances-test-{_free_port()}-{os.getpid()}",
        "DEBUG": "1",
    }
    with _serving(env, workers=2) as base:
        yield Server(base, env)


async def _client(stack: AsyncExitStack, server: Server, username: str) -> tuple[Client, Any]:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {server.token(username)}"}, timeout=30
    )
    await stack.enter_async_context(http)
    client = await stack.enter_async_context(
        Client(streamable_http_client(f"{server.base}/mcp", http_client=http))
    )
    assert client.session.protocol_version == "2026-07-28"
    return client, http


async def _order_with(
    http: Any, server: Server, operation: str, skip: str = ""
) -> tuple[str, dict[str, Any]]:
    """An order (by URI, not ``skip``) on which the caller of ``http`` may run
    ``operation`` now."""
    for pk in range(1, 13):
        uri = f"{server.base}/api/orders/{pk}/"
        answer = await http.get(uri)
        if uri == skip or answer.status_code != 200:
            continue
        for affordance in answer.json().get("affordances", []):
            if affordance["name"] == operation:
                return uri, affordance
    raise AssertionError(f"no order offers {operation}")


async def _first_event(subscription: Any, within: float) -> Any:
    async def first() -> Any:
        async for event in subscription:
            return event
        return None

    return await asyncio.wait_for(first(), within)


def test_the_capabilities_say_what_the_asgi_server_streams(server):
    async def scenario() -> dict[str, Any]:
        async with AsyncExitStack() as stack:
            client, _ = await _client(stack, server, "alice")
            capabilities = client.session.server_capabilities
            assert capabilities is not None
            return capabilities.model_dump(by_alias=True, exclude_none=True)

    capabilities = asyncio.run(scenario())
    assert capabilities["tools"]["listChanged"] is True
    assert capabilities["resources"]["subscribe"] is True


def test_a_listener_hears_another_users_rest_transition_and_mcp_call(server):
    async def scenario() -> tuple[list[Any], str, str]:
        async with AsyncExitStack() as stack:
            alice, _ = await _client(stack, server, "alice")
            support, support_http = await _client(stack, server, "support")
            uri, confirm = await _order_with(support_http, server, "confirm_order")
            other, by_mcp = await _order_with(support_http, server, "confirm_order", skip=uri)
            heard = []
            async with alice.listen(resource_subscriptions=[uri, other]) as subscription:
                assert subscription.honored.resource_subscriptions == [uri, other]
                # 1. REST, as support.
                answer = await support_http.post(confirm["target"], json={})
                assert answer.status_code == 200, answer.text
                heard.append(await _first_event(subscription, 1.0))
                # 2. MCP, as support, on the other order.
                result = await support.call_tool("confirm_order", by_mcp["arguments"])
                assert not result.is_error, result
                heard.append(await _first_event(subscription, 1.0))
            return heard, uri, other

    heard, uri, other = asyncio.run(scenario())
    assert heard == [ResourceUpdated(uri), ResourceUpdated(other)]


def test_an_order_the_listener_may_not_see_is_refused_as_a_missing_one(server):
    async def scenario() -> tuple[MCPError, MCPError, MCPError]:
        async with AsyncExitStack() as stack:
            bob, _ = await _client(stack, server, "bob")
            _, alice_http = await _client(stack, server, "alice")
            uri, _ = await _order_with(alice_http, server, "cancel_order")
            missing = f"{server.base}/api/orders/999999/"
            errors = []
            for target in (uri, missing):
                with pytest.raises(MCPError) as refused:
                    async with bob.listen(resource_subscriptions=[target]):
                        pass
                errors.append(refused.value)
            with pytest.raises(MCPError) as read:
                await bob.read_resource(uri)
            return errors[0], errors[1], read.value

    hidden, missing, read = asyncio.run(scenario())
    assert hidden.error.code == missing.error.code == read.error.code
    assert hidden.error.message == missing.error.message == read.error.message
    assert "999999" not in str(hidden.error.data)


def test_tools_list_changed_arrives_when_the_callers_groups_change(server):
    async def scenario() -> Any:
        async with AsyncExitStack() as stack:
            alice, _ = await _client(stack, server, "alice")
            before = {tool.name for tool in (await alice.list_tools()).tools}
            async with alice.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                await asyncio.to_thread(
                    server.manage_shell,
                    "from django.contrib.auth.models import Group, User; "
                    "User.objects.get(username='alice').groups.add("
                    "Group.objects.get(name='support'))",
                )
                event = await _first_event(subscription, 1.0)
            after = {tool.name for tool in (await alice.list_tools()).tools}
            return event, before, after

    event, before, after = asyncio.run(scenario())
    assert isinstance(event, ToolsListChanged)
    assert before != after


class _FormFields(HTMLParser):
    """The fields a browser would submit from the page's form ``form_id``: inputs (the
    checked ones of checkboxes and radios), selected options, textareas."""

    def __init__(self, form_id: str) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {key: value or "" for key, value in attrs}
        if tag == "form":
            self.inside = named.get("id") == self.form_id
        if tag == "option" and self._select is not None:
            # The selected option, else the first (what a browser submits).
            if "selected" in named or self._select not in self.fields:
                self.fields[self._select] = named.get("value", "")
            return
        if not self.inside or "name" not in named:
            return
        name = named["name"]
        if tag == "input" and named.get("type") not in ("submit", "button", "file"):
            if named.get("type") not in ("checkbox", "radio") or "checked" in named:
                self.fields[name] = named.get("value", "")
        elif tag == "select":
            self._select = name
        elif tag == "textarea":
            self._textarea = name
            self.fields[name] = ""

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False
        elif tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def _form(html: str, form_id: str) -> dict[str, str]:
    parser = _FormFields(form_id)
    parser.feed(html)
    return parser.fields


def _admin_session(base: str, username: str) -> httpx2.Client:
    """A browser's admin session: the login form posted with its CSRF token."""
    http = httpx2.Client(base_url=base, timeout=30)
    login = http.get("/admin/login/")
    fields = _form(login.text, "login-form")
    fields.update(username=username, password=DEMO_PASSWORD)
    answer = http.post("/admin/login/?next=/admin/", data=fields)
    assert answer.status_code == 302 and answer.headers["location"] == "/admin/", answer.text
    return http


def test_a_listener_hears_an_admin_edit_served_by_another_process(server):
    """The admin's change form (a staff user's edit, through the execution path's
    ``perform_edit``) publishes on commit like any run: a listener held by one server
    hears an edit served by another process — a second uvicorn on the same database and
    channel, so that the edit is never served by the listener's own process."""

    async def scenario(admin_base: str) -> tuple[Any, float, str, str]:
        async with AsyncExitStack() as stack:
            alice, alice_http = await _client(stack, server, "alice")
            uri, _ = await _order_with(alice_http, server, "cancel_order")
            pk = uri.rstrip("/").rsplit("/", 1)[1]
            async with alice.listen(resource_subscriptions=[uri]) as subscription:
                assert subscription.honored.resource_subscriptions == [uri]

                def edit() -> float:
                    http = _admin_session(admin_base, "admin")
                    try:
                        change = f"/admin/orders/order/{pk}/change/"
                        fields = _form(http.get(change).text, "order_form")
                        assert "description" in fields, fields
                        fields.update(description="Edited in the admin", _save="Save")
                        answer = http.post(change, data=fields)
                        assert answer.status_code == 302, answer.text[:2000]
                        return time.monotonic()
                    finally:
                        http.close()

                edited_at = await asyncio.to_thread(edit)
                event = await _first_event(subscription, 1.0)
                heard_after = time.monotonic() - edited_at
            read = await alice_http.get(uri)
            return event, heard_after, read.json()["description"], uri

    with _serving(server.env, workers=1) as admin_base:
        event, heard_after, description, uri = asyncio.run(scenario(admin_base))
    assert event == ResourceUpdated(uri)
    assert heard_after < 1.0
    assert description == "Edited in the admin"
