# ruff: noqa: F811
"""Client ID Metadata Documents (issue 54): a client whose ``client_id`` is an https URL
describes itself there, and the authorization server fetches it — safely.

The documents are served by a real HTTPS server on 127.0.0.1 (tests/metadata_server.py,
its certificate trusted through ``SSL_CERT_FILE``), which needs the development
allowance ``OAUTH_CIMD_ALLOW_PRIVATE``; the refusals of private addresses run without
it, and that server must then never see a request. The flow is the one of
tests/test_mcp_oauth.py (a logged-in person consents; the code is exchanged with PKCE;
the token calls the MCP endpoint), with the URL as the client_id.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.core.checks import run_checks
from django.test import override_settings
from django.utils import timezone
from oauth2_provider.models import get_application_model

from tests.metadata_server import MetadataServer, Page, metadata_host  # noqa: F401
from tests.test_mcp_oauth import (  # noqa: F401 (fixtures)
    BASE,
    REDIRECT,
    _affordances,
    _authorize_query,
    _code,
    _exchange,
    _mcp,
    _refresh,
    _tools,
    browser,
    project,
    root,
)

# Only https redirect URIs in the settings, as the demo has them: the document's
# loopback URI passes as a registration's does.
OAUTH = {
    **django_settings.OAUTH2_PROVIDER,
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "affordances.mcp.cimd.MetadataFetcher",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
}


def _document(url: str, **changes: Any) -> dict[str, Any]:
    document = {
        "client_id": url,
        "client_name": "Example MCP host",
        "client_uri": "https://app.example.com",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **changes,
    }
    return {k: v for k, v in document.items() if v is not None}


def _configured(allow_private: bool, **oauth: Any) -> Any:
    return override_settings(
        AFFORDANCES=_affordances(OAUTH_CIMD_ALLOW_PRIVATE=allow_private),
        OAUTH2_PROVIDER={**OAUTH, **oauth},
    )


@pytest.fixture
def cimd(project: None) -> Iterator[None]:
    """Metadata documents on, fetched from this machine (the test server)."""
    cache.clear()  # no failure remembered from another test
    with _configured(allow_private=True):
        yield
    cache.clear()


@pytest.fixture
def strict(project: None) -> Iterator[None]:
    """Metadata documents on, as in production: nothing fetched from private addresses."""
    cache.clear()
    with _configured(allow_private=False):
        yield
    cache.clear()


def _authorize(browser: Any, client_id: str) -> Any:
    return browser.get("/o/authorize/?" + urlencode(_authorize_query(client_id)))


def _refused(page: Any, *reasons: str) -> str:
    """The error page: 400, invalid_client, the reasons, no form and no redirect."""
    html = page.content.decode()
    assert page.status_code == 400, (page.status_code, html[:2000])
    assert "Location" not in page and "authorizationForm" not in html
    assert "invalid_client" in html
    for reason in reasons:
        assert reason in html, (reason, html[:3000])
    return html


def _application(client_id: str) -> Any:
    return get_application_model().objects.filter(client_id=client_id).first()


# --- the flow ------------------------------------------------------------------------


def test_the_metadata_says_documents_are_supported(cimd):
    from django.test import Client

    document = Client().get("/.well-known/oauth-authorization-server/o").json()
    assert document["client_id_metadata_document_supported"] is True


def test_a_client_described_by_its_document_gets_a_token_for_the_mcp_endpoint(
    cimd, browser, metadata_host: MetadataServer
):
    url = metadata_host.url("/oauth/client.json")
    metadata_host.publish("/oauth/client.json", _document(url), cache_control="max-age=600")

    # The consent page names the host that published the document.
    page = _authorize(browser, url)
    assert page.status_code == 200, page.content
    html = page.content.decode()
    host = f"127.0.0.1:{metadata_host.port}"
    assert f"<code>{host}</code> wants to act as you here." in html, html
    assert 'id="unverified"' in html and f"fetched from {host}" in html
    assert '<code id="redirect-host">127.0.0.1:9</code>' in html

    # Consent, the code, the token (PKCE, no secret), and the MCP endpoint.
    answer = _exchange(_code(browser, url), url)
    assert answer.status_code == 200, answer.content
    tokens = answer.json()
    assert _tools(_mcp(tokens["access_token"]))

    # A public client under the URL, from the document, kept as its Cache-Control says.
    application = _application(url)
    assert application.registration_source == "cimd"
    assert application.client_type == "public" and application.client_secret == ""
    assert application.redirect_uris == REDIRECT
    assert application.name == "Example MCP host"
    left = (application.cimd_expires_at - timezone.now()).total_seconds()
    assert 590 < left <= 600, left
    # One fetch for the consent page, the consent and the code's exchange.
    assert metadata_host.requests == ["/oauth/client.json"]

    # Its refresh token works with the URL as client_id too.
    refreshed = _refresh(url, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.content
    assert _tools(_mcp(refreshed.json()["access_token"]))


def test_a_document_is_fetched_again_once_its_time_is_up(
    cimd, browser, metadata_host: MetadataServer
):
    url = metadata_host.url("/client.json")
    metadata_host.publish("/client.json", _document(url), cache_control="max-age=3600")
    assert _authorize(browser, url).status_code == 200
    assert _authorize(browser, url).status_code == 200
    assert metadata_host.requests == ["/client.json"]  # kept: not fetched again

    # Changed at its host, and its time up: the consent page fetches it again.
    metadata_host.publish("/client.json", _document(url, client_name="Renamed host"))
    get_application_model().objects.filter(client_id=url).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )
    page = _authorize(browser, url)
    assert page.status_code == 200 and "Renamed host" in page.content.decode()
    assert metadata_host.requests == ["/client.json"] * 2
    # No Cache-Control: kept the longest django-oauth-toolkit allows (a day by default).
    expires = _application(url).cimd_expires_at
    assert timedelta(hours=23) < expires - timezone.now() <= timedelta(days=1)

    # The token endpoint fetches a known document again too once its time is up, and
    # keeps the last good one when its host fails.
    code = _code(browser, url)
    del metadata_host.pages["/client.json"]  # now a 404
    get_application_model().objects.filter(client_id=url).update(
        cimd_expires_at=timezone.now() - timedelta(seconds=1)
    )
    answer = _exchange(code, url)
    assert answer.status_code == 200, answer.content
    assert metadata_host.requests == ["/client.json"] * 3
    assert _application(url).name == "Renamed host"


def test_the_token_endpoint_never_fetches_a_document_it_has_not_seen(
    cimd, metadata_host: MetadataServer
):
    url = metadata_host.publish("/client.json", _document(metadata_host.url("/client.json")))
    answer = _exchange("a-code", url)
    assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
    assert metadata_host.requests == [] and _application(url) is None


def test_a_client_registered_otherwise_keeps_its_url(cimd, browser, metadata_host):
    url = metadata_host.url("/client.json")
    metadata_host.publish("/client.json", _document(url, client_name="Impostor"))
    get_application_model().objects.create(
        client_id=url,
        name="The operator's client",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=REDIRECT,
    )
    page = _authorize(browser, url)
    assert page.status_code == 200 and "The operator" in page.content.decode()
    assert metadata_host.requests == []
    assert _application(url).registration_source == "manual"


# --- what is never fetched -----------------------------------------------------------


@pytest.mark.parametrize(
    "client_id",
    [
        "https://127.0.0.1:{port}/client.json",
        "https://localhost:{port}/client.json",  # by name: every resolved address checked
        "https://[::1]:{port}/client.json",
        "https://10.0.0.1/client.json",
        "https://192.168.1.1:{port}/client.json",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::ffff:127.0.0.1]:{port}/client.json",  # an IPv4 in IPv6 clothing
    ],
)
def test_private_addresses_are_never_fetched(
    strict, browser, metadata_host: MetadataServer, client_id
):
    url = client_id.format(port=metadata_host.port)
    metadata_host.publish("/client.json", _document(url))
    started = time.monotonic()
    _refused(_authorize(browser, url), "resolves to an address that is not public")
    assert time.monotonic() - started < 2  # refused before any connection
    assert metadata_host.requests == [] and _application(url) is None


def test_the_development_allowance_never_reaches_link_local_addresses(cimd, browser):
    url = "https://169.254.169.254/latest/meta-data/"
    _refused(_authorize(browser, url), "resolves to an address that is not public")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("http://127.0.0.1:{port}/client.json", "must use the https scheme"),
        ("https://127.0.0.1:{port}", "must contain a path component"),
        ("https://user@127.0.0.1:{port}/client.json", "userinfo"),
        ("https://127.0.0.1:{port}/a/../client.json", "dot path segments"),
        ("https://127.0.0.1:{port}/client.json#x", "fragment"),
        ("https://127.0.0.1:{port}/" + "a" * 300, "longer than the 255 characters"),
    ],
)
def test_urls_that_cannot_name_a_document_are_refused_unfetched(
    cimd, browser, metadata_host: MetadataServer, path, reason
):
    url = path.format(port=metadata_host.port)
    _refused(_authorize(browser, url), reason)
    assert metadata_host.requests == []


# --- what is fetched, and refused -----------------------------------------------------


def _bad(server: MetadataServer, kind: str) -> str:
    """Serve at /client.json a document wrong in the way ``kind`` says; its URL."""
    url = server.url("/client.json")
    good = _document(url)
    if kind == "too large":
        server.publish("/client.json", _document(url, client_name="x" * 20_000))
    elif kind == "too large, no length":
        server.publish("/client.json", _document(url, client_name="x" * 20_000), length=False)
    elif kind == "redirect":
        server.publish("/elsewhere.json", good)
        server.pages["/client.json"] = Page(status=302, headers={"Location": "/elsewhere.json"})
    elif kind == "not found":
        pass
    elif kind == "not JSON":
        server.publish("/client.json", b"<html>hello</html>", content_type="text/html")
    elif kind == "malformed JSON":
        server.publish("/client.json", b'{"client_id": ')
    elif kind == "a list":
        server.publish("/client.json", [good])
    elif kind == "another client_id":
        server.publish("/client.json", _document(server.url("/other.json")))
    elif kind == "no redirect URI":
        server.publish("/client.json", _document(url, redirect_uris=None))
    elif kind == "http redirect URI":
        server.publish("/client.json", _document(url, redirect_uris=["http://app.example/cb"]))
    elif kind == "javascript redirect URI":
        server.publish("/client.json", _document(url, redirect_uris=["javascript:alert(1)"]))
    elif kind == "implicit grant":
        server.publish("/client.json", _document(url, grant_types=["implicit"]))
    elif kind == "private_key_jwt":
        server.publish("/client.json", _document(url, token_endpoint_auth_method="private_key_jwt"))
    elif kind == "a secret":
        server.publish(
            "/client.json",
            _document(url, token_endpoint_auth_method="client_secret_basic"),
        )
    elif kind == "control characters":
        server.publish("/client.json", _document(url, client_name="Claude\x00"))
    else:  # pragma: no cover
        raise AssertionError(kind)
    return url


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("too large", "larger than 16384 bytes"),
        ("too large, no length", "larger than 16384 bytes"),
        ("redirect", "redirects are not followed"),
        ("not found", "it answered HTTP 404"),
        ("not JSON", "not served as JSON"),
        ("malformed JSON", "not valid JSON"),
        ("a list", "not a JSON object"),
        ("another client_id", "not exactly the URL it was fetched from"),
        ("no redirect URI", "redirect_uris is not a non-empty list"),
        ("http redirect URI", "http on a loopback address"),
        ("javascript redirect URI", "invalid_scheme: javascript:alert(1)"),
        ("implicit grant", "grant_types may hold only authorization_code"),
        ("private_key_jwt", "private_key_jwt client authentication, which this server"),
        ("a secret", "holds no shared secret"),
        ("control characters", "control characters"),
    ],
)
def test_a_document_the_policy_refuses_is_a_clear_error_page(
    cimd, browser, metadata_host: MetadataServer, kind, reason
):
    url = _bad(metadata_host, kind)
    html = _refused(_authorize(browser, url), reason)
    assert f"The client&#x27;s metadata document {url} cannot be used" in html
    assert metadata_host.requests == ["/client.json"]  # once, and no redirect followed
    assert _application(url) is None


def test_a_document_for_hosts_outside_the_allowlist_is_refused(
    project, browser, metadata_host: MetadataServer
):
    url = metadata_host.url("/client.json")
    metadata_host.publish(
        "/client.json", _document(url, redirect_uris=["https://attacker.example/cb"])
    )
    cache.clear()
    with override_settings(
        AFFORDANCES=_affordances(
            OAUTH_CIMD_ALLOW_PRIVATE=True, OAUTH_REDIRECT_HOSTS=[".trusted.example"]
        ),
        OAUTH2_PROVIDER=OAUTH,
    ):
        _refused(_authorize(browser, url), "names a host this server does not send codes to")
    assert _application(url) is None


def test_a_server_that_trickles_is_cut_at_the_time_limit(
    project, browser, metadata_host: MetadataServer
):
    url = metadata_host.url("/client.json")
    metadata_host.publish("/client.json", _document(url), stall=20)
    cache.clear()
    with _configured(allow_private=True, CIMD_FETCH_TIMEOUT_SECONDS=1):
        started = time.monotonic()
        _refused(_authorize(browser, url), "fetching it took longer than 1 s")
        assert time.monotonic() - started < 5
    assert _application(url) is None


def test_a_certificate_the_server_does_not_trust_is_refused(
    cimd, browser, metadata_host: MetadataServer, monkeypatch
):
    url = metadata_host.publish("/client.json", _document(metadata_host.url("/client.json")))
    monkeypatch.delenv("SSL_CERT_FILE")  # the system's trust store: the test CA is not in it
    _refused(_authorize(browser, url), "TLS certificate could not be verified")
    assert _application(url) is None


def test_a_refusal_is_remembered_for_the_backoff(cimd, browser, metadata_host: MetadataServer):
    url = _bad(metadata_host, "another client_id")
    _refused(_authorize(browser, url), "not exactly the URL")
    # Fixed at once: still refused, with the reason and when to retry, and not fetched.
    metadata_host.publish("/client.json", _document(url))
    _refused(_authorize(browser, url), "not exactly the URL", "try again later")
    assert metadata_host.requests == ["/client.json"]
    cache.clear()  # the backoff over
    assert _authorize(browser, url).status_code == 200


# --- settings --------------------------------------------------------------------------


def test_a_bad_allowance_is_e030(settings):
    settings.AFFORDANCES = {**django_settings.AFFORDANCES, "OAUTH_CIMD_ALLOW_PRIVATE": "yes"}
    messages = [m for m in run_checks() if m.id.startswith("affordances.")]
    assert [m.id for m in messages] == ["affordances.E030"], messages
    assert "OAUTH_CIMD_ALLOW_PRIVATE" in messages[0].msg


def test_the_allowance_is_a_deploy_warning(settings):
    found = {m.id for m in run_checks(include_deployment_checks=True)}
    assert "affordances.W015" not in found
    settings.AFFORDANCES = {**django_settings.AFFORDANCES, "OAUTH_CIMD_ALLOW_PRIVATE": True}
    assert "affordances.W015" in {m.id for m in run_checks(include_deployment_checks=True)}
    assert "affordances.W015" not in {m.id for m in run_checks()}
