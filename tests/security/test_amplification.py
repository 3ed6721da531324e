"""F1 and F2 of the second attack: caches keyed by validated values, headers by clean ones
(on the shop of ``tests.generic.shop``).

F1: ``GET /api/schema/?lang=<random>`` (and ``?version=<random>``) generated and kept a
new OpenAPI document per value (35 to 48 ms and up to 1 MB each); ``Accept`` parameters
made new cached renderings of the catalog; zero-padded MCP ``tools/list`` cursors made
new entries. F2: ``?version=a%0d%0ab`` was a 500, ``?version=x";filename=evil.html``
spoofed the download name and wrote itself into ``info.version``.
"""

from __future__ import annotations

import base64
import secrets
from typing import Any

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from affordances import memo
from affordances.mcp.transport import pagination
from tests.mcp_wire import Wire
from tests.shop_data import Shop

OPENAPI_JSON = "application/vnd.oai.openapi+json"


def _client(shop: Shop, role: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(shop.users[role])}")


def _growth(send: Any, times: int = 12) -> int:
    """How many memo entries ``times`` calls of ``send`` added after the first."""
    send()
    before = len(memo.DOCUMENTS)
    for _ in range(times):
        send()
    return len(memo.DOCUMENTS) - before


@pytest.mark.parametrize("parameter", ["lang", "version"])
def test_unknown_schema_parameters_make_no_new_documents(shop, parameter):
    client = _client(shop, "support")

    def send() -> None:
        value = secrets.token_hex(8)
        response = client.get(f"/api/schema/?{parameter}={value}", HTTP_ACCEPT=OPENAPI_JSON)
        assert response.status_code == 200
        assert value not in response.content.decode()
        assert value not in response["Content-Disposition"]

    assert _growth(send) == 0


def test_an_unknown_language_is_the_default_document(shop):
    client = _client(shop, "support")
    plain = client.get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON)
    odd = client.get("/api/schema/?lang=xx-evil", HTTP_ACCEPT=OPENAPI_JSON)
    assert odd.status_code == 200
    assert odd.content == plain.content and odd["ETag"] == plain["ETag"]


@pytest.mark.parametrize(
    "version",
    ["a%0d%0ab", "a%0bb", "a%0ab", "x%22%3B%20filename%3Devil.html", "%00", "1" * 5000],
)
def test_a_crafted_version_reaches_no_header_and_no_document(shop, version):
    response = _client(shop, "support").get(
        f"/api/schema/?version={version}", HTTP_ACCEPT=OPENAPI_JSON
    )
    assert response.status_code == 200
    disposition = response["Content-Disposition"]
    assert disposition.count('"') == 2 and "evil" not in disposition
    assert not any(char in disposition for char in "\r\n\x0b\x00")
    info = response.json()["info"]
    assert "evil" not in str(info["version"]) and "\n" not in str(info["version"])


def test_accept_parameters_that_do_not_change_the_bytes_make_no_new_renderings(shop):
    client = _client(shop, "support")

    def send() -> None:
        accept = f"application/json; x-nonce={secrets.token_hex(6)}"
        response = client.get("/api/operations/", HTTP_ACCEPT=accept)
        assert response.status_code == 200

    assert _growth(send) == 0


def test_indent_still_changes_the_rendering(shop):
    client = _client(shop, "support")
    plain = client.get("/api/operations/", HTTP_ACCEPT="application/json")
    indented = client.get("/api/operations/", HTTP_ACCEPT="application/json; indent=2")
    assert indented.json() == plain.json()
    assert b"\n  " in indented.content and b"\n  " not in plain.content


def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        _cursor("tools:02"),
        _cursor("tools:0002"),
        _cursor("tools:+2"),
        _cursor("tools:\u0662"),  # an Arabic-Indic 2
        _cursor("tools:2") + "==",
        base64.urlsafe_b64encode(b"tools:2").decode(),  # with its padding
    ],
)
def test_a_non_canonical_tools_list_cursor_is_invalid_params(shop, cursor):
    wire = Wire(str(AccessToken.for_user(shop.users["admin"])))
    wire.tools()
    before = len(memo.DOCUMENTS)
    envelope = wire.call("tools/list", {"cursor": cursor})
    assert envelope["error"]["code"] == -32602
    assert len(memo.DOCUMENTS) == before


def test_the_canonical_cursor_still_pages():
    assert pagination.decode(pagination.encode("tools", 2), "tools") == 2


def test_documents_per_caller_stay_within_the_byte_bound(shop):
    # One document per user is a key space that grows with the site: bytes bound it.
    from django.contrib.auth import get_user_model

    users = list(get_user_model().objects.all())
    for user in users:
        client = Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(user)}")
        assert client.get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON).status_code == 200
        assert memo.stored_bytes() <= memo.MAX_BYTES
