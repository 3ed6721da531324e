"""OAuth 2.1 end to end: the official MCP Python SDK given the endpoint's URL alone.

``mcp.client.auth.OAuthClientProvider`` gets the 401, reads the RFC 9728 metadata it
points at, the authorization server's RFC 8414 metadata, registers (RFC 7591), sends
the user's browser to the authorization endpoint (PKCE S256, RFC 8707 ``resource``) —
headless Chromium logs in on the demo's login page and consents on
django-oauth-toolkit's — checks the RFC 9207 ``iss`` of the answer, exchanges the code,
and retries: ``tools/list`` and a transition then run as that user. The redirect URI is
a loopback URL Chromium never reaches: the browser hands the answer to the test.

The MCP TypeScript SDK's (``clients/mcp_oauth_flow.mjs``, on Node 22) does the same
with its ``OAuthClientProvider``: the script prints the authorization URL, the test's
browser logs in and consents, the code goes back on stdin; then ``finishAuth``,
``tools/list``, a transition, and a refresh through the SDK's ``auth()`` — rotated,
still bound to the endpoint, the spent refresh token refused.

With a Client ID Metadata Document (``client_metadata_url``) the Python SDK registers
nothing: the server fetches the document from a real HTTPS server on 127.0.0.1
(tests/metadata_server.py) and the consent page names the host that published it.

One live server (pytest-django's, on 127.0.0.1) and one browser for the module.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("playwright")

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from oauth2_provider.models import get_access_token_model, get_application_model
from playwright.async_api import Browser, Route, async_playwright

from affordances.models import AuditRecord
from demo_tests.clients.conftest import BIN, CLIENTS
from demo_tests.conftest import DEMO_PASSWORD, Demo
from tests.metadata_server import MetadataServer, metadata_host  # noqa: F401 (a fixture)

CHROMIUM = "/usr/bin/chromium"
# Never listened on: Chromium's request to it is answered by the test (page.route).
REDIRECT_URI = "http://127.0.0.1:9/callback"

if shutil.which(CHROMIUM) is None:
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


T = TypeVar("T")


@dataclass
class Chromium:
    """One headless Chromium for the module, on an event loop of its own (each test
    runs its coroutine on it: the browser outlives any one ``asyncio.run``)."""

    loop: asyncio.AbstractEventLoop
    browser: Browser

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    loop = asyncio.new_event_loop()
    playwright = loop.run_until_complete(async_playwright().start())
    try:
        browser = loop.run_until_complete(
            playwright.chromium.launch(
                executable_path=CHROMIUM,
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
        )
        try:
            yield Chromium(loop, browser)
        finally:
            loop.run_until_complete(browser.close())
    finally:
        loop.run_until_complete(playwright.stop())
        loop.close()


async def _authorize(browser: Browser, url: str, username: str, seen: dict[str, Any]) -> str:
    """The user's part: open the authorization URL in a fresh context (no session), log
    in on the demo's login page, consent on django-oauth-toolkit's; the redirect's URL,
    which Chromium never sends anywhere (the loopback port is answered here)."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        page.set_default_timeout(15_000)
        answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def callback(route: Route) -> None:
            if not answered.done():
                answered.set_result(route.request.url)
            await route.fulfill(status=200, body="You may close this window.")

        await page.route(f"{REDIRECT_URI}*", callback)
        seen["authorize"] = url
        await page.goto(url)
        # Not logged in: the demo's login page, back to the consent page after.
        seen["login_page"] = urlsplit(page.url).path
        await page.fill("#id_username", username)
        await page.fill("#id_password", DEMO_PASSWORD)
        await page.click("[type=submit]")
        await page.wait_for_selector("#authorizationForm")
        seen["consent"] = await page.inner_text("#authorizationForm")
        await page.click("input[name=allow]")
        return await asyncio.wait_for(answered, 30)
    finally:
        await context.close()


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def _flow(
    browser: Browser,
    base: str,
    username: str,
    pending: int,
    client_metadata_url: str | None = None,
) -> dict[str, Any]:
    seen: dict[str, Any] = {"requests": []}
    storage = Memory()
    answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def redirect_handler(url: str) -> None:
        answered.set_result(await _authorize(browser, url, username, seen))

    async def callback_handler() -> AuthorizationCodeResult:
        query = _query(await answered)
        seen["callback"] = query
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    provider = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="affordances OAuth test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )

    async def record(request: httpx2.Request) -> None:
        seen["requests"].append(f"{request.method} {request.url.path}")

    async with (
        httpx2.AsyncClient(auth=provider, timeout=30, event_hooks={"request": [record]}) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
        confirmed = await client.call_tool(
            "confirm_order", {"orderId": pending, "expectedVersion": 1}
        )
        seen["confirmed"] = confirmed.structured_content
        seen["is_error"] = confirmed.is_error

    assert storage.tokens is not None and storage.client is not None
    seen["token"] = storage.tokens
    seen["client_id"] = storage.client.client_id
    return seen


async def _refresh(base: str, client_id: str, refresh_token: str) -> dict[str, Any]:
    """Refresh rotation: a new pair; the old refresh token spent, and its reuse revokes
    the family (the new access token included)."""
    seen: dict[str, Any] = {}
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": client_id,
        "resource": f"{base}/mcp",
    }

    async def listing(http: httpx2.AsyncClient, token: str) -> int:
        response = await http.post(
            f"{base}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Authorization": f"Bearer {token}",
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json",
            },
        )
        return response.status_code

    async with httpx2.AsyncClient(timeout=30) as http:
        first = await http.post(f"{base}/o/token/", data=refresh)
        seen["refreshed"] = (first.status_code, first.json())
        fresh = first.json().get("access_token", "")
        seen["fresh_listing"] = await listing(http, fresh)
        again = await http.post(f"{base}/o/token/", data=refresh)
        seen["reused"] = (again.status_code, again.json())
        seen["after_reuse"] = await listing(http, fresh)
    return seen


def test_an_mcp_client_with_the_url_alone_logs_in_consents_and_acts(
    live_server: Any, demo: Demo, chromium: Chromium
) -> None:
    pending = demo.orders["demo-01"].pk
    seen = chromium.run(_flow(chromium.browser, live_server.url, "support", pending))

    # Discovery from the 401 alone, registration, then the authorization code grant.
    requests = seen["requests"]
    for step in (
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server/o",
        "POST /o/register/",
        "POST /o/token/",
    ):
        assert step in requests, (step, requests)
    authorize = parse_qs(urlsplit(seen["authorize"]).query)
    assert authorize["code_challenge_method"] == ["S256"]
    assert authorize["resource"] == [f"{live_server.url}/mcp"]
    assert set(authorize["scope"][0].split()) == {"mcp:read", "mcp:write"}
    assert seen["login_page"] == "/api-auth/login/"
    assert "Run the operations you may run" in seen["consent"]
    assert seen["callback"]["iss"] == f"{live_server.url}/o"  # RFC 9207

    # The user's tools, and a transition run as that user.
    assert "confirm_order" in seen["tools"] and "ship_order" not in seen["tools"]
    assert seen["is_error"] is False, seen["confirmed"]
    assert seen["confirmed"]["status"] == "confirmed"
    record = AuditRecord.objects.get(operation_name="confirm_order", object_id=str(pending))
    assert record.username == "support" and record.via == "mcp"

    # The token is bound to the endpoint (RFC 8707) with the scopes consented to.
    token = get_access_token_model().objects.filter(user__username="support").latest("created")
    assert token.resource == [f"{live_server.url}/mcp"]
    assert set(token.scope.split()) == {"mcp:read", "mcp:write"}
    application = get_application_model().objects.get(client_id=seen["client_id"])
    assert application.client_type == "public" and application.redirect_uris == REDIRECT_URI

    refresh = chromium.run(
        _refresh(live_server.url, seen["client_id"], seen["token"].refresh_token)
    )
    status, body = refresh["refreshed"]
    assert status == 200 and body["refresh_token"] != seen["token"].refresh_token, body
    assert refresh["fresh_listing"] == 200
    status, body = refresh["reused"]
    assert status == 400 and body["error"] == "invalid_grant", body
    assert refresh["after_reuse"] == 401


def test_an_mcp_client_named_by_its_metadata_document_needs_no_registration(
    live_server: Any,
    demo: Demo,
    chromium: Chromium,
    metadata_host: MetadataServer,  # noqa: F811
    settings: Any,
) -> None:
    """The SDK with a Client ID Metadata Document: the server's metadata says it takes
    them, so the SDK registers nothing and sends the document's URL as its client_id;
    the server fetches the document (from the test's HTTPS server on 127.0.0.1, hence
    the development allowance), and the person consents to the host that published it."""
    settings.AFFORDANCES = {**settings.AFFORDANCES, "OAUTH_CIMD_ALLOW_PRIVATE": True}
    url = metadata_host.url("/oauth/client.json")
    metadata_host.publish(
        "/oauth/client.json",
        {
            "client_id": url,
            "client_name": "affordances CIMD test",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
        cache_control="max-age=300",
    )
    pending = demo.orders["demo-01"].pk
    seen = chromium.run(
        _flow(chromium.browser, live_server.url, "support", pending, client_metadata_url=url)
    )

    requests = seen["requests"]
    assert "GET /.well-known/oauth-authorization-server/o" in requests, requests
    assert "POST /o/token/" in requests and "POST /o/register/" not in requests, requests
    authorize = parse_qs(urlsplit(seen["authorize"]).query)
    assert authorize["client_id"] == [url] and authorize["code_challenge_method"] == ["S256"]
    assert seen["client_id"] == url
    host = f"127.0.0.1:{metadata_host.port}"
    assert f"{host} wants to act as you here" in seen["consent"], seen["consent"]
    assert f"{host} asks to:" in seen["consent"]

    assert "confirm_order" in seen["tools"] and seen["is_error"] is False, seen["confirmed"]
    assert seen["confirmed"]["status"] == "confirmed"
    record = AuditRecord.objects.get(operation_name="confirm_order", object_id=str(pending))
    assert record.username == "support" and record.via == "mcp"

    application = get_application_model().objects.get(client_id=url)
    assert application.registration_source == "cimd" and application.client_type == "public"
    assert application.name == "affordances CIMD test"
    assert application.redirect_uris == REDIRECT_URI
    # Fetched once, for the consent page; the consent and the token used what it kept.
    assert metadata_host.requests == ["/oauth/client.json"]


async def _typescript_flow(browser: Browser, base: str, username: str, pending: int) -> Any:
    """clients/mcp_oauth_flow.mjs as a host: its authorization URL to the browser, the
    redirect's query back; what it did, as it reports it."""
    seen: dict[str, Any] = {}
    process = await asyncio.create_subprocess_exec(
        str(BIN / "node"),
        "mcp_oauth_flow.mjs",
        f"{base}/mcp",
        str(pending),
        cwd=CLIENTS,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        async with asyncio.timeout(90):
            while line := await process.stdout.readline():
                message = json.loads(line)
                if "authorize" in message:
                    url = await _authorize(browser, message["authorize"], username, seen)
                    process.stdin.write(json.dumps(_query(url)).encode() + b"\n")
                    await process.stdin.drain()
                elif "done" in message:
                    seen.update(message["done"])
            await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.stderr is not None
    assert process.returncode == 0, (await process.stderr.read()).decode()[-3000:]
    return seen


def _stored(access: str) -> Any:
    checksum = hashlib.sha256(access.encode()).hexdigest()
    return get_access_token_model().objects.filter(token_checksum=checksum).first()


def _listing(base: str, token: str) -> int:
    response = httpx2.post(
        f"{base}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": "2025-11-25",
            "Accept": "application/json",
        },
        timeout=30,
    )
    return response.status_code


def test_the_typescript_sdk_with_the_url_alone_logs_in_consents_acts_and_refreshes(
    live_server: Any, demo: Demo, chromium: Chromium
) -> None:
    if not (BIN / "node").exists():
        pytest.skip("the client packages are not installed: npm ci --prefix clients")
    base = live_server.url
    pending = demo.orders["demo-01"].pk
    seen = chromium.run(_typescript_flow(chromium.browser, base, "support", pending))

    # From the 401 alone: RFC 9728 metadata, RFC 8414 metadata, registration, the code.
    requests = seen["requests"]
    for step in (
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-authorization-server/o",
        "POST /o/register/",
        "POST /o/token/",
    ):
        assert step in requests, (step, requests)
    authorize = _query(seen["authorize"])
    assert authorize["code_challenge_method"] == "S256"
    assert authorize["resource"] == f"{base}/mcp"
    assert set(authorize["scope"].split()) == {"mcp:read", "mcp:write"}
    assert seen["login_page"] == "/api-auth/login/"
    application = get_application_model().objects.get(client_id=seen["clientId"])
    assert application.client_type == "public" and application.name == "affordances TS SDK test"

    # The user's tools, and a transition run as that user.
    assert "confirm_order" in seen["tools"] and "ship_order" not in seen["tools"]
    assert seen["isError"] is False, seen["confirmed"]
    assert seen["confirmed"]["status"] == "confirmed"
    assert demo.order("demo-01").status == "confirmed"
    record = AuditRecord.objects.get(operation_name="confirm_order", object_id=str(pending))
    assert record.username == "support" and record.via == "mcp"

    # The SDK's refresh: a new pair, bound to the endpoint as the first (RFC 8707), the
    # first access token revoked with the refresh token it came with.
    first, second = seen["first"], seen["second"]
    assert seen["refreshed"] == "AUTHORIZED" and seen["toolsAfterRefresh"] > 0
    assert second["refresh"] != first["refresh"] and second["access"] != first["access"]
    fresh = _stored(second["access"])
    assert fresh is not None and fresh.resource == [f"{base}/mcp"]
    assert fresh.user.username == "support"
    assert set(fresh.scope.split()) == {"mcp:read", "mcp:write"}
    assert _stored(first["access"]) is None and _listing(base, first["access"]) == 401

    # The spent refresh token is refused, and its replay revokes the family.
    replay = httpx2.post(
        f"{base}/o/token/",
        data={
            "grant_type": "refresh_token",
            "refresh_token": first["refresh"],
            "client_id": seen["clientId"],
        },
        timeout=30,
    )
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert _listing(base, second["access"]) == 401
