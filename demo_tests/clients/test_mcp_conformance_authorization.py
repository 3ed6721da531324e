"""The official MCP conformance suite's authorization server scenarios against the
demo's django-oauth-toolkit under ``/o/``.

``conformance authorization`` comes with ``@modelcontextprotocol/conformance``
0.2.0-alpha.12, installed beside the pinned 0.1.16 as the npm alias ``conformance-next``
(clients/package.json). The server scenarios stay on 0.1.16
(test_mcp_conformance.py): the alpha changes the server scenario set. Both packages
name their command ``conformance``, so neither test runs it from ``node_modules/.bin``
(whichever npm linked last); each runs its own package's ``dist/index.js``.

Its two scenarios run together, as the suite has them: ``authorization-server-
metadata-endpoint`` reads the RFC 8414 metadata, which ``authorization-code-grant``
then uses. The grant is one for a public client registered here by RFC 7591: the suite
prints the authorization URL (PKCE S256, RFC 8707 ``resource``) and waits on its
loopback callback server; the test is the user — it logs in on the demo's login page
and consents with plain HTTP requests, and hands the redirect to the suite, which
checks the answer (RFC 9207 ``iss`` included) and exchanges the code.

Every check must pass, the one for Client ID Metadata Documents included: the demo
offers them (``client_id_metadata_document_supported`` is true; affordances.mcp.cimd).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from oauth2_provider.models import get_access_token_model, get_application_model

from demo_tests.clients.conftest import BIN, CLIENTS
from demo_tests.conftest import DEMO_PASSWORD, Demo

SUITE = CLIENTS / "node_modules" / "conformance-next"
SCENARIOS = {"authorization-server-metadata-endpoint", "authorization-code-grant"}
# Checks that may warn rather than pass: none (the CIMD one warned while the demo
# offered no Client ID Metadata Documents).
MAY_WARN: set[str] = set()
# The suite waits five minutes for the callback; the whole run takes about two seconds.
DEADLINE = 60

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class _HiddenFields(HTMLParser):
    """The hidden inputs of a page's forms (of the one with ``form_id`` if given)."""

    def __init__(self, form_id: str | None = None) -> None:
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form":
            self.inside = self.form_id is None or found.get("id") == self.form_id
        elif tag == "input" and self.inside and found.get("type") == "hidden":
            self.fields[found.get("name") or ""] = found.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


def _hidden(page: str, form_id: str | None = None) -> dict[str, str]:
    parser = _HiddenFields(form_id)
    parser.feed(page)
    return parser.fields


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _log_in_and_consent(url: str, redirect_uri: str, seen: dict[str, Any]) -> None:
    """The user's part: the authorization URL without a session, the demo's login page,
    django-oauth-toolkit's consent page; the answer to the suite's callback server."""
    with httpx2.Client(follow_redirects=True, timeout=10) as browser:
        login = browser.get(url)
        seen["login_page"] = login.url.path
        consent = browser.post(
            str(login.url),
            data={**_hidden(login.text), "username": "support", "password": DEMO_PASSWORD},
            headers={"Referer": str(login.url)},
        )
        fields = _hidden(consent.text, "authorizationForm")
        assert fields, consent.text[-2000:]
        answer = browser.post(
            str(consent.url),
            data={**fields, "allow": "Authorize"},
            headers={"Referer": str(consent.url)},
            follow_redirects=False,
        )
    location = answer.headers.get("Location", "")
    seen["answer"] = location
    assert answer.status_code == 302 and location.startswith(f"{redirect_uri}?"), answer
    httpx2.get(location, timeout=10)  # the suite's callback, on 127.0.0.1


def _results(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario name → its checks, from the suite's ``-o`` directory."""
    found: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(directory.glob("authorization-server-*/checks.json")):
        # authorization-server-{scenario}-{ISO time with dashes}Z
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name)
        found[scenario.removeprefix("authorization-server-")] = json.loads(checks.read_text())
    return found


def test_the_authorization_server_passes_the_conformance_suites_scenarios(
    live_server: Any, demo: Demo, tmp_path: Path
) -> None:
    if not (SUITE / "dist" / "index.js").exists():
        pytest.skip("conformance-next is not installed: npm ci --prefix clients")
    base = live_server.url
    port = _free_port()
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    registered = httpx2.post(
        f"{base}/o/register/",
        json={
            "client_name": "MCP conformance suite",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        timeout=10,
    )
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]

    out = tmp_path / "results"
    command = [
        str(BIN / "node"),
        str(SUITE / "dist" / "index.js"),
        "authorization",
        "--url",
        f"{base}/o",
        "--client-id",
        client_id,
        "--resource",
        f"{base}/mcp",
        "-p",
        str(port),
        "-o",
        str(out),
    ]
    env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1", "CI": "1"}
    seen: dict[str, Any] = {}
    output: list[str] = []
    process = subprocess.Popen(
        command,
        cwd=CLIENTS,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # Killed at the deadline whatever it waits for: its output then ends, and so the loop.
    watchdog = threading.Timer(DEADLINE, process.kill)
    watchdog.start()
    try:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            if line.startswith(f"{base}/o/authorize/") and "authorize" not in seen:
                seen["authorize"] = line.strip()
                _log_in_and_consent(line.strip(), redirect_uri, seen)
        process.wait(timeout=10)
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
        process.wait()
    log = "".join(output)[-4000:]
    assert process.returncode == 0, log

    # The user's part went as a person's would, through the demo's own pages.
    authorize = {k: v[0] for k, v in parse_qs(urlsplit(seen["authorize"]).query).items()}
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == f"{base}/mcp"
    assert seen["login_page"] == "/api-auth/login/"
    assert "iss=" in seen["answer"]  # RFC 9207

    # Both scenarios ran, and every check passed.
    results = _results(out)
    assert set(results) == SCENARIOS, log
    statuses = [(check["id"], check["status"]) for checks in results.values() for check in checks]
    ids = {check_id for check_id, _ in statuses}
    assert {
        "authorization-server-metadata",
        "authorization-server-metadata-cimd",
        "authorization-code-grant",
    } <= ids
    for check_id, status in statuses:
        allowed = {"SUCCESS", "WARNING"} if check_id in MAY_WARN else {"SUCCESS"}
        assert status in allowed, (check_id, status, results)

    # The suite's token: the registered public client's, the user's, bound to /mcp.
    application = get_application_model().objects.get(client_id=client_id)
    assert application.client_type == "public"
    # (Besides the RFC 7592 registration access token, which has no user.)
    token = get_access_token_model().objects.get(
        application=application, user=demo.users["support"]
    )
    assert token.resource == [f"{base}/mcp"]
