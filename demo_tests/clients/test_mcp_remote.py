"""mcp-remote, the stdio proxy desktop hosts (Claude Desktop and the like) launch, given
the endpoint's URL alone.

``mcp-remote`` (clients/package.json) gets the 401, discovers the authorization server
(RFC 9728, RFC 8414), registers itself (RFC 7591) with a redirect URI on its own
loopback callback server (``http://127.0.0.1:<port>/oauth/callback``), prints the
authorization URL on stderr and hands it to the desktop's browser — here a stand-in
(``BROWSER``) that only writes it down. Headless Chromium is the user: it opens that
URL, logs in on the demo's login page, consents on django-oauth-toolkit's, and the
redirect reaches mcp-remote's callback server for real — an http loopback redirect,
with the demo's settings as they are and ``DEBUG`` off (pytest-django's). mcp-remote
exchanges the code and becomes a proxy: the test is the host, speaking JSON-RPC on its
stdin and stdout — ``initialize``, ``tools/list`` (the consenting user's tools), a read.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("playwright")

from django.conf import settings
from oauth2_provider.models import get_access_token_model, get_application_model
from playwright.async_api import async_playwright

from demo_tests.clients.conftest import BIN, CLIENTS
from demo_tests.conftest import DEMO_PASSWORD, Demo

CHROMIUM = "/usr/bin/chromium"
PROXY = CLIENTS / "node_modules" / "mcp-remote" / "dist" / "proxy.js"
NEVER_FOR_A_CUSTOMER = {"confirm_order", "ship_order", "deliver_order", "refund_order"}
# Each wait (the URL on stderr, the browser, an answer on stdout); the flow takes seconds.
DEADLINE = 60
# What a desktop session would tell xdg-open; without them it takes BROWSER.
DESKTOP = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "KDE_FULL_SESSION",
    "GNOME_DESKTOP_SESSION_ID",
    "DBUS_SESSION_BUS_ADDRESS",
)

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Lines:
    """A stream's lines, read on a thread of its own, waited for with a deadline."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def next(self) -> str:
        try:
            line = self.lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(f"nothing within {DEADLINE}s") from None
        if line is None:
            raise AssertionError("the stream ended")
        self.seen.append(line)
        return line

    def text(self) -> str:
        while True:  # what is left without waiting: the process is gone by now
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.seen.append(line)
        return "".join(self.seen)[-4000:]


def _stop(process: subprocess.Popen[str]) -> None:
    """Kills the process and its group (mcp-remote runs in a session of its own)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.fixture
def mcp_remote(tmp_path: Path) -> Iterator[Any]:
    """``start(url, port)`` → the running mcp-remote, its stdout and stderr read; it and
    anything it started in its process group are killed after the test."""
    started: list[subprocess.Popen[str]] = []
    browser = tmp_path / "browser"
    browser.write_text('#!/bin/sh\nprintf \'%s\\n\' "$1" >> "$(dirname "$0")/opened"\n')
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)

    def start(url: str, port: int) -> tuple[subprocess.Popen[str], _Lines, _Lines]:
        env = {key: value for key, value in os.environ.items() if key not in DESKTOP}
        env |= {
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
            "HOME": str(tmp_path),
            "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
            "BROWSER": str(browser),
            "NO_COLOR": "1",
        }
        command = [str(BIN / "node"), str(PROXY), url, str(port), "--host", "127.0.0.1"]
        process = subprocess.Popen(
            [*command, "--auth-timeout", str(DEADLINE)],
            cwd=CLIENTS,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        started.append(process)
        assert process.stdout is not None and process.stderr is not None
        return process, _Lines(process.stdout), _Lines(process.stderr)

    yield start
    for process in started:
        _stop(process)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


async def _log_in_and_consent(url: str, username: str, callback: str) -> dict[str, Any]:
    """The user's part in a fresh headless Chromium: the authorization URL, the demo's
    login page, the consent page; then the redirect, which Chromium follows to
    mcp-remote's callback server."""
    seen: dict[str, Any] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = await browser.new_page()
            page.set_default_timeout(DEADLINE * 1000)
            await page.goto(url)
            seen["login_page"] = urlsplit(page.url).path
            await page.fill("#id_username", username)
            await page.fill("#id_password", DEMO_PASSWORD)
            await page.click("[type=submit]")
            await page.wait_for_selector("#authorizationForm")
            seen["consent"] = await page.inner_text("#authorizationForm")
            async with page.expect_response(lambda r: r.url.startswith(f"{callback}?")) as done:
                await page.click("input[name=allow]")
            answer = await done.value
            seen["callback"] = answer.url
            seen["callback_status"] = answer.status
            seen["callback_page"] = await answer.text()
        finally:
            await browser.close()
    return seen


def _rpc(
    process: subprocess.Popen[str], out: _Lines, ident: int, method: str, params: Any = None
) -> Any:
    """One request on mcp-remote's stdin; its answer from stdout (notifications skipped)."""
    assert process.stdin is not None
    message = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    while True:
        answer = json.loads(out.next())
        if answer.get("id") == ident:
            assert "error" not in answer, answer
            return answer["result"]


@pytest.mark.parametrize("username", ["support", "alice"])
def test_mcp_remote_with_the_url_alone_logs_in_through_its_loopback_callback(
    live_server: Any, demo: Demo, tmp_path: Path, mcp_remote: Any, username: str
) -> None:
    if not PROXY.exists():
        pytest.skip("mcp-remote is not installed: npm ci --prefix clients")
    assert settings.DEBUG is False  # loopback http redirects work without DEBUG
    base = live_server.url
    port = _free_port()
    callback = f"http://127.0.0.1:{port}/oauth/callback"
    applications = get_application_model().objects
    before = set(applications.values_list("pk", flat=True))
    order = demo.order("demo-01")

    process, out, err = mcp_remote(f"{base}/mcp", port)
    try:
        # "Please authorize this client by visiting:" and the URL on a line of its own.
        authorize = ""
        while not authorize:
            line = err.next().strip()
            if re.match(rf"{re.escape(base)}/o/authorize/?\?", line):
                authorize = line
        seen = asyncio.run(_log_in_and_consent(authorize, username, callback))
        while "Proxy established" not in err.next():
            pass

        initialized = _rpc(
            process, out, 1, "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "affordances mcp-remote test", "version": "1.0.0"},
            },
        )  # fmt: skip
        assert process.stdin is not None
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        )
        process.stdin.flush()
        tools = {tool["name"] for tool in _rpc(process, out, 2, "tools/list", {})["tools"]}
        read = _rpc(
            process, out, 3, "tools/call", {"name": "get_order", "arguments": {"orderId": order.pk}}
        )
    except AssertionError as error:
        _stop(process)
        raise AssertionError(f"{error}\n--- mcp-remote's stderr:\n{err.text()}") from error
    finally:
        _stop(process)

    # The authorization request: PKCE S256, the endpoint as the resource (RFC 8707), the
    # redirect to mcp-remote's own callback; the browser stand-in was handed that URL.
    query = {k: v[0] for k, v in parse_qs(urlsplit(authorize).query).items()}
    assert query["code_challenge_method"] == "S256"
    assert query["resource"] == f"{base}/mcp"
    assert query["redirect_uri"] == callback
    assert set(query["scope"].split()) <= {"mcp:read", "mcp:write"}
    # (Re-encoded by mcp-remote's URL sanitiser on the way: the same URL, parsed.)
    (opened,) = (tmp_path / "opened").read_text().splitlines()
    assert opened.split("?")[0] == authorize.split("?")[0]
    assert parse_qs(urlsplit(opened).query) == parse_qs(urlsplit(authorize).query)

    # The user logged in and consented; the answer (RFC 9207 iss) reached the callback.
    assert seen["login_page"] == "/api-auth/login/"
    assert "Read what you may read" in seen["consent"]
    assert seen["callback_status"] == 200, seen["callback_page"]
    assert "Authorization successful" in seen["callback_page"]
    answer = {k: v[0] for k, v in parse_qs(urlsplit(seen["callback"]).query).items()}
    assert answer["iss"] == f"{base}/o" and answer["code"]

    # The host's session through the proxy, as the user who consented.
    assert initialized["serverInfo"]["name"] and initialized["capabilities"]["tools"] is not None
    assert {"get_order", "list_orders", "cancel_order"} <= tools
    if username == "support":
        assert "confirm_order" in tools and "ship_order" not in tools
    else:
        assert not tools & NEVER_FOR_A_CUSTOMER
    assert read.get("isError") is not True, read
    assert read["structuredContent"]["id"] == order.pk
    assert read["structuredContent"]["status"] == "pending"

    # One registration, a public client whose only redirect URI is the loopback callback;
    # its token is the consenting user's, bound to the endpoint.
    (application,) = applications.exclude(pk__in=before)
    assert application.client_id == query["client_id"]
    assert application.client_type == "public"
    assert application.redirect_uris.split() == [callback]
    (token,) = get_access_token_model().objects.filter(application=application, user__isnull=False)
    assert token.user.username == username
    assert token.resource == [f"{base}/mcp"]
