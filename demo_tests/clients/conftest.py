"""Real third-party clients (``clients/package.json``) against a live demo server.

Each test runs a client nobody on this project wrote — the MCP conformance suite, the
MCP Inspector CLI, Ketting, Redocly — as a subprocess on Node 22 (the npm registry's
``node`` package; the machine's own Node may be older), against pytest-django's live
server on 127.0.0.1. They skip when ``npm ci --prefix clients`` has not run; ``.ci/run``
and ``make clients`` run it.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
from rest_framework_simplejwt.tokens import AccessToken

CLIENTS = Path(__file__).resolve().parents[2] / "clients"
BIN = CLIENTS / "node_modules" / ".bin"


@pytest.fixture(autouse=True)
def _clients_installed() -> None:
    if not (BIN / "node").exists():
        pytest.skip("the client packages are not installed: npm ci --prefix clients")


def token_for(user: Any) -> str:
    return str(AccessToken.for_user(user))


def run(
    command: Sequence[str], *, home: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """A client's command on Node 22, with its own HOME (the Inspector keeps a catalog
    there) and no colours; never left running."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "NO_COLOR": "1",
        "CI": "1",
    }
    return subprocess.run(
        [*command], cwd=CLIENTS, env=env, capture_output=True, text=True, timeout=timeout
    )


class _BearerProxy(BaseHTTPRequestHandler):
    """Forwards every request to the live server unchanged — Host and Origin included, so
    the server's own origin checks see what the client sent — adding the bearer token.
    What a deployment's gateway does for a client that cannot send one."""

    protocol_version = "HTTP/1.1"
    upstream = ""
    token = ""

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {
            key: value
            for key, value in self.headers.items()
            if key.lower() not in {"content-length", "connection", "authorization"}
        }
        headers["Authorization"] = f"Bearer {self.token}"
        request = Request(
            self.upstream + self.path, data=body, headers=headers, method=self.command
        )
        try:
            answer = urlopen(request, timeout=60)  # the live server, on 127.0.0.1
        except HTTPError as error:
            answer = error
        data = answer.read()
        self.send_response(answer.status)
        for key, value in answer.headers.items():
            if key.lower() not in {"transfer-encoding", "connection", "content-length"}:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = do_OPTIONS = _forward

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def bearer_proxy() -> Iterator[Any]:
    """``start(upstream, token)`` → the proxy's base URL; stopped after the test."""
    servers: list[ThreadingHTTPServer] = []

    def start(upstream: str, token: str) -> str:
        handler = type("Proxy", (_BearerProxy,), {"upstream": upstream, "token": token})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def last_json(text: str) -> Any:
    """The last line of ``text`` that is a JSON document (clients may log before it)."""
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise AssertionError(f"no JSON in the output:\n{text[-2000:]}")
