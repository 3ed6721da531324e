"""OAuth 2.1 for the MCP endpoints (issue 39): the protected resource and the `oauth` extra.

The resource side (affordances.mcp.authorization): RFC 9728 metadata per endpoint, the
401 challenge pointing at it (with ``scope``, and ``error="invalid_token"`` for a bad
token), RFC 8707 audience checks, 403 ``insufficient_scope`` when a token lacks the
scope a request needs — a scope narrows what the user may do, never widens it.

The authorization server (django-oauth-toolkit through affordances.mcp.oauth): RFC 8414
metadata, registration restricted to the authorization code grant, PKCE S256 only,
RFC 9207 ``iss``, and every malformed request answered with the RFC's error, never a
500. The whole flow with a real client and browser is demo_tests/test_mcp_oauth_flow.py.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt as pyjwt
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.checks import run_checks
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    set_token_value,
)
from rest_framework_simplejwt.tokens import AccessToken as JwtAccessToken

from affordances.mcp import authorization
from affordances.models import OAuthIdentity
from tests.generic import lending_api, oauth_api
from tests.generic.lending import Book, Loan

BASE = "http://testserver"
METADATA = f"{BASE}/.well-known/oauth-protected-resource/mcp"
REDIRECT = "http://127.0.0.1:9/callback"
CLASSES = [
    "affordances.mcp.oauth.OAuth2Authentication",
    "rest_framework_simplejwt.authentication.JWTAuthentication",
]
VERIFIER = "a-code-verifier-of-at-least-forty-three-characters-0123456789"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=")


def _affordances(**extra: Any) -> dict[str, Any]:
    return {
        **django_settings.AFFORDANCES,
        "MODELS": lending_api.REGISTRATIONS,
        "MCP_AUTHORIZATION_SERVERS": ["/o"],
        "MCP_AUTHENTICATION_CLASSES": CLASSES,
        **extra,
    }


@pytest.fixture
def project(db: None) -> Iterator[None]:
    with override_settings(AFFORDANCES=_affordances()):
        importlib.reload(oauth_api)
        with override_settings(ROOT_URLCONF="tests.generic.oauth_api"):
            yield


@pytest.fixture
def root(project: None) -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


@pytest.fixture
def loan(project: None) -> Loan:
    from datetime import date

    return Loan.objects.create(book=Book.objects.create(title="Dune"), due=date(2030, 1, 1))


def _client_app(**fields: Any) -> Any:
    return get_application_model().objects.create(
        name="host",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=REDIRECT,
        **fields,
    )


def _token(
    user: Any,
    scope: str = "mcp:read mcp:write",
    resource: list[str] | None = None,
    expires: timedelta = timedelta(hours=1),
    value: str = "opaque-token-0123456789",
) -> str:
    token = get_access_token_model()(
        user=user,
        application=_client_app(),
        expires=timezone.now() + expires,
        scope=scope,
        resource=[f"{BASE}/mcp"] if resource is None else resource,
    )
    set_token_value(token, value)
    token.save()
    return value


def _mcp(
    token: str | None,
    method: str = "tools/list",
    params: dict[str, Any] | None = None,
    path: str = "/mcp",
) -> Any:
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params else {})}
    return Client().post(
        path, data=json.dumps(body), content_type="application/json", headers=headers
    )


def _tools(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [tool["name"] for tool in response.json()["result"]["tools"]]


# --- RFC 9728 metadata ----------------------------------------------------------------


def test_each_mcp_endpoint_publishes_its_protected_resource_metadata(project):
    response = Client().get("/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200
    assert response.json() == {
        "resource": f"{BASE}/mcp",
        "resource_name": "Affordances (catalog + affordances)",
        "authorization_servers": [f"{BASE}/o"],
        "scopes_supported": ["mcp:read", "mcp:write"],
        "bearer_methods_supported": ["header"],
    }
    assert response["Access-Control-Allow-Origin"] == "*"
    forms = Client().get("/.well-known/oauth-protected-resource/mcp/forms").json()
    assert forms["resource"] == f"{BASE}/mcp/forms"
    origin = Client().get("/.well-known/oauth-protected-resource").json()
    assert origin["resource"] == BASE and origin["authorization_servers"] == [f"{BASE}/o"]


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource/nothing-here",
        "/.well-known/oauth-protected-resource/api/loans/",  # not an MCP endpoint
        "/.well-known/oauth-protected-resource/mcp/",
        "/.well-known/oauth-protected-resource//mcp",
        "/.well-known/oauth-protected-resource/%00",
        "/.well-known/oauth-protected-resource/" + "a/" * 2000,
        "/.well-known/oauth-protected-resource/%ff%fe",
        "/.well-known/oauth-protected-resourcemcp",
    ],
)
def test_malformed_metadata_requests_are_404s_never_500s(project, path):
    response = Client().get(path)
    assert response.status_code == 404, response.content
    if response["Content-Type"] == "application/json":
        assert response.json()["error"] == "not_found"


def test_metadata_takes_get_only_and_is_404_until_a_server_is_configured(project):
    refused = Client().post("/.well-known/oauth-protected-resource/mcp", {"x": "1"})
    assert refused.status_code == 405 and refused["Allow"] == "GET, HEAD, OPTIONS"
    preflight = Client().options("/.well-known/oauth-protected-resource/mcp")
    assert preflight.status_code == 204 and preflight["Access-Control-Allow-Origin"] == "*"
    with override_settings(AFFORDANCES=_affordances(MCP_AUTHORIZATION_SERVERS=[])):
        assert Client().get("/.well-known/oauth-protected-resource/mcp").status_code == 404
        # And the challenge is what it was before (tests/test_mcp_challenge.py).
        assert _mcp(None)["WWW-Authenticate"] == 'Bearer realm="api"'


def test_an_absolute_issuer_is_named_as_it_is(project):
    servers = ["https://auth.example.com", "https://login.example.com/tenant"]
    with override_settings(AFFORDANCES=_affordances(MCP_AUTHORIZATION_SERVERS=servers)):
        document = Client().get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["authorization_servers"] == servers


# --- challenges -----------------------------------------------------------------------


def test_the_401_points_at_the_metadata_and_names_the_scopes(project):
    response = _mcp(None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == (
        f'Bearer realm="api", resource_metadata="{METADATA}", scope="mcp:read mcp:write"'
    )
    forms = _mcp(None, path="/mcp/forms")["WWW-Authenticate"]
    assert (
        'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp/forms"'
        in forms
    )


@pytest.mark.parametrize(
    "token",
    ["unknown-opaque-token", "not.a.jwt", "eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl", "x" * 5000],
)
def test_a_bad_token_is_invalid_token(project, token):
    response = _mcp(token)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].endswith('error="invalid_token"'), response[
        "WWW-Authenticate"
    ]
    assert f'resource_metadata="{METADATA}"' in response["WWW-Authenticate"]


def test_an_expired_token_is_invalid_token(root):
    token = _token(root, expires=timedelta(seconds=-1))
    response = _mcp(token)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_deactivated_users_token_is_invalid_token(root):
    token = _token(root)
    assert _tools(_mcp(token))
    root.is_active = False
    root.save()
    _invalid_token(_mcp(token))


@pytest.mark.parametrize(
    "resource",
    [
        ["https://elsewhere.example/mcp"],
        [f"{BASE}/mcp/forms"],  # a sibling endpoint's token
        [f"{BASE}/mc"],
        ["http://testserver:8443/mcp"],
        [f"{BASE}/api/"],
    ],
)
def test_a_token_for_another_resource_is_refused(root, resource):
    response = _mcp(_token(root, resource=resource))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_token_for_the_endpoint_a_parent_or_the_origin_is_accepted(root):
    assert _tools(_mcp(_token(root, resource=[f"{BASE}/mcp"], value="t1")))
    assert _tools(_mcp(_token(root, resource=[BASE], value="t2")))
    assert _tools(_mcp(_token(root, resource=[f"{BASE}/mcp"], value="t3"), path="/mcp/forms"))
    assert _tools(_mcp(_token(root, resource=["HTTP://TESTSERVER:80/mcp/"], value="t4")))


def test_unbound_tokens_are_refused_when_an_audience_is_required(root):
    unbound = _token(root, resource=[])
    jwt = str(JwtAccessToken.for_user(root))
    assert _tools(_mcp(unbound)) and _tools(_mcp(jwt))
    with override_settings(AFFORDANCES=_affordances(MCP_REQUIRE_AUDIENCE=True)):
        for token in (unbound, jwt):
            response = _mcp(token)
            assert response.status_code == 401
            assert 'error="invalid_token"' in response["WWW-Authenticate"]


# --- scopes ---------------------------------------------------------------------------


def test_a_read_scope_reads_and_a_write_needs_the_write_scope(root, loan):
    read_only = _token(root, scope="mcp:read")
    tools = _tools(_mcp(read_only))
    assert "get_loan" in tools and "give_back_loan" in tools  # tools/list: the user's
    got = _mcp(read_only, "tools/call", {"name": "get_loan", "arguments": {"loanId": loan.pk}})
    assert got.status_code == 200 and not got.json()["result"]["isError"], got.content

    refused = _mcp(
        read_only, "tools/call", {"name": "give_back_loan", "arguments": {"loanId": loan.pk}}
    )
    assert refused.status_code == 403
    assert refused["WWW-Authenticate"] == (
        f'Bearer realm="api", error="insufficient_scope", scope="mcp:read mcp:write", '
        f'resource_metadata="{METADATA}"'
    )
    assert Loan.objects.get(pk=loan.pk).status == "out"

    both = _token(root, value="read-write-token")
    assert _tools(_mcp(both)) == tools  # the same list whatever the scopes
    done = _mcp(both, "tools/call", {"name": "give_back_loan", "arguments": {"loanId": loan.pk}})
    assert done.status_code == 200 and not done.json()["result"]["isError"], done.content
    assert Loan.objects.get(pk=loan.pk).status == "returned"


@pytest.mark.parametrize("scope", ["", "openid", "mcp:write", "read write"])
def test_a_token_without_the_read_scope_is_403(root, scope):
    response = _mcp(_token(root, scope=scope))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]


def test_the_forms_profile_submits_with_the_write_scope_only(root, loan):
    read_only = _token(root, scope="mcp:read")
    url = f"{BASE}/api/loans/{loan.pk}/"
    read = _mcp(
        read_only, "tools/call", {"name": "read_resource", "arguments": {"url": url}}, "/mcp/forms"
    )
    assert read.status_code == 200, read.content
    submit = {"name": "submit_form", "arguments": {"url": url, "template": "give_back_loan"}}
    assert _mcp(read_only, "tools/call", submit, "/mcp/forms").status_code == 403


def test_tokens_without_scopes_keep_working(root, loan):
    # simplejwt's, from /api/token/ in the demo: not narrowed (the opt-out).
    jwt = str(JwtAccessToken.for_user(root))
    call = _mcp(jwt, "tools/call", {"name": "give_back_loan", "arguments": {"loanId": loan.pk}})
    assert call.status_code == 200 and not call.json()["result"]["isError"], call.content


# --- what a token says, and the settings ----------------------------------------------


def test_scopes_and_audiences_are_read_from_tokens_and_claims():
    assert authorization.granted_scopes({"scope": "a b"}) == {"a", "b"}
    assert authorization.granted_scopes({"scp": ["a"]}) == {"a"}
    assert authorization.granted_scopes({"sub": "1"}) is None
    assert authorization.granted_scopes(None) is None
    assert authorization.audiences({"aud": "https://x/mcp"}) == ("https://x/mcp",)
    assert authorization.audiences({"aud": ["https://x/mcp", "https://y"]}) == (
        "https://x/mcp",
        "https://y",
    )
    assert authorization.audiences({"aud": []}) is None
    assert authorization.audiences({"aud": 3}) is None
    assert authorization.covers("https://x", "https://x/mcp")
    assert authorization.covers("https://x/mcp", "https://x/mcp/forms")
    assert not authorization.covers("https://x/mcp", "https://x/mcpx")
    assert not authorization.covers("https://u@x/mcp", "https://x/mcp")
    assert not authorization.covers("https://x:99999/mcp", "https://x/mcp")
    assert not authorization.covers("urn:x", "https://x/mcp")
    assert authorization.covers("http://[::1]:80/mcp", "http://[::1]/mcp")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MCP_AUTHORIZATION_SERVERS", "https://a.example"),
        ("MCP_AUTHORIZATION_SERVERS", ["auth.example.com"]),
        ("MCP_AUTHORIZATION_SERVERS", ["https://a.example/?x=1"]),
        ("MCP_AUTHORIZATION_SERVERS", [""]),
        ("MCP_READ_SCOPE", "has space"),
        ("MCP_WRITE_SCOPE", 3),
        ("MCP_REQUIRE_AUDIENCE", "yes"),
    ],
)
def test_a_bad_oauth_setting_is_e030(settings, name, value):
    settings.AFFORDANCES = {**django_settings.AFFORDANCES, name: value}
    messages = [m for m in run_checks() if m.id.startswith("affordances.")]
    assert [m.id for m in messages] == ["affordances.E030"], messages
    assert name in messages[0].msg


# --- the authorization server (django-oauth-toolkit) ----------------------------------


def test_the_authorization_server_metadata_is_where_rfc_8414_puts_it(project):
    document = Client().get("/.well-known/oauth-authorization-server/o").json()
    assert document["issuer"] == f"{BASE}/o"
    assert Client().get("/o/.well-known/oauth-authorization-server").json() == document
    assert document["authorization_endpoint"] == f"{BASE}/o/authorize/"
    assert document["token_endpoint"] == f"{BASE}/o/token/"
    assert document["registration_endpoint"] == f"{BASE}/o/register/"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["response_types_supported"] == ["code"]
    assert document["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert "none" in document["token_endpoint_auth_methods_supported"]


def _register(body: Any, raw: bool = False) -> Any:
    data = body if raw else json.dumps(body)
    return Client().post("/o/register/", data=data, content_type="application/json")


def test_a_host_registers_a_public_client(project):
    response = _register(
        {
            "client_name": "A host",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["redirect_uris"] == [REDIRECT] and body["token_endpoint_auth_method"] == "none"
    assert response["Cache-Control"] == "no-store"
    assert get_application_model().objects.get(client_id=body["client_id"]).client_type == "public"


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[1, 2]",
        json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}),
        json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["password"]}),
        json.dumps({"redirect_uris": [REDIRECT], "grant_types": ["refresh_token"]}),
        json.dumps({"redirect_uris": [REDIRECT], "grant_types": "authorization_code"}),
        json.dumps({"redirect_uris": [REDIRECT], "response_types": ["token"]}),
        json.dumps({"grant_types": ["authorization_code"]}),  # no redirect URI
        json.dumps({"redirect_uris": ["javascript:alert(1)"]}),
        json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"}),
        json.dumps({"redirect_uris": "http://127.0.0.1:9/callback"}),
    ],
)
def test_bad_registrations_are_invalid_client_metadata(project, body):
    response = _register(body, raw=True)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_client_metadata"


@pytest.mark.parametrize(
    "uri", ["http://host.example/cb", "http://127.0.0.2.example/cb", "http://10.0.0.1/cb"]
)
def test_plain_http_redirects_are_for_loopback_addresses_only(project, uri):
    response = _register({"redirect_uris": [uri]})
    assert response.status_code == 400 and response.json()["error"] == "invalid_redirect_uri"
    for fine in ("http://localhost:8080/cb", "http://[::1]:3/cb", "https://host.example/cb"):
        assert _register({"redirect_uris": [fine]}).status_code == 201, fine


def _authorize_query(client_id: str, changes: dict[str, Any] | None = None) -> dict[str, str]:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s-1",
        "scope": "mcp:read mcp:write",
        "code_challenge": CHALLENGE.decode(),
        "code_challenge_method": "S256",
        "resource": f"{BASE}/mcp",
        **(changes or {}),
    }
    return {k: v for k, v in query.items() if v is not None}


def _consent(browser: Client, query: dict[str, str]) -> Any:
    page = browser.get("/o/authorize/?" + urlencode(query))
    assert page.status_code == 200, page.content
    return browser.post("/o/authorize/", {**query, "allow": "Authorize"})


def _code(browser: Client, client_id: str) -> str:
    answer = _consent(browser, _authorize_query(client_id))
    assert answer.status_code == 302, answer.content
    location = urlsplit(answer["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
    query = {k: v[0] for k, v in parse_qs(location.query).items()}
    assert query["state"] == "s-1" and query["iss"] == f"{BASE}/o"  # RFC 9207
    return query["code"]


def _exchange(code: str, client_id: str, changes: dict[str, Any] | None = None) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": VERIFIER,
        "resource": f"{BASE}/mcp",
        **(changes or {}),
    }
    return Client().post("/o/token/", {k: v for k, v in data.items() if v is not None})


@pytest.fixture
def browser(root: Any) -> Client:
    client = Client()
    client.force_login(root)
    return client


def test_the_code_flow_binds_the_token_to_the_endpoint(browser, loan):
    app = _client_app()
    answer = _exchange(_code(browser, app.client_id), app.client_id)
    assert answer.status_code == 200, answer.content
    assert answer["Cache-Control"] == "no-store"
    access = answer.json()["access_token"]
    stored = get_access_token_model().objects.get()
    assert stored.resource == [f"{BASE}/mcp"] and stored.token == ""  # hashed at rest
    assert _tools(_mcp(access))
    # Bound to /mcp: refused on the REST face by django-oauth-toolkit's own check.
    rest = Client().get("/api/loans/", headers={"Authorization": f"Bearer {access}"})
    assert rest.status_code in {401, 403}


def test_a_code_is_used_once(browser):
    app = _client_app()
    code = _code(browser, app.client_id)
    assert _exchange(code, app.client_id).status_code == 200
    again = _exchange(code, app.client_id)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"code_verifier": None}, {"invalid_request", "invalid_grant"}),
        ({"code_verifier": "b" * 50}, {"invalid_grant"}),
        ({"redirect_uri": "http://127.0.0.1:9/other"}, {"invalid_request", "invalid_grant"}),
        ({"client_id": "unknown-client"}, {"invalid_client"}),
        ({"grant_type": "password"}, {"unsupported_grant_type", "invalid_request"}),
        ({"code": "not-a-code"}, {"invalid_grant"}),
        ({"resource": "https://elsewhere.example/mcp"}, {"invalid_target"}),
        ({"resource": "not a uri"}, {"invalid_target"}),
    ],
)
def test_bad_token_requests_get_the_rfc_error(browser, changes, error):
    app = _client_app()
    answer = _exchange(_code(browser, app.client_id), app.client_id, changes)
    assert 400 <= answer.status_code < 500, answer.content
    assert answer["Content-Type"] == "application/json"  # RFC 6749 §5.2
    assert answer.json()["error"] in error, answer.json()


@pytest.mark.parametrize(
    "changes",
    [{"client_id": "unknown-client"}, {"redirect_uri": "https://attacker.example/cb"}],
)
def test_an_unknown_client_or_redirect_uri_is_never_redirected_to(browser, changes):
    # RFC 6749 §4.1.2.1: tell the user, MUST NOT redirect.
    app = _client_app()
    page = browser.get("/o/authorize/?" + urlencode(_authorize_query(app.client_id, changes)))
    assert page.status_code in {200, 400} and "Location" not in page
    assert b"Error" in page.content and b"authorizationForm" not in page.content


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, {"invalid_request"}),
        ({"code_challenge_method": "plain"}, {"invalid_request"}),
        ({"response_type": "token"}, {"unsupported_response_type", "unauthorized_client"}),
        ({"scope": "admin"}, {"invalid_scope"}),
        ({"resource": "not a uri"}, {"invalid_target"}),
    ],
)
def test_bad_authorization_requests_go_back_with_the_rfc_error(browser, changes, errors):
    app = _client_app()
    query = _authorize_query(app.client_id, changes)
    answer = browser.get("/o/authorize/?" + urlencode(query))
    if answer.status_code == 200:  # refused once the user consents (plain PKCE)
        answer = browser.post("/o/authorize/", {**query, "allow": "Authorize"})
    assert answer.status_code in {302, 400}, answer.status_code
    if answer.status_code == 302:
        location = parse_qs(urlsplit(answer["Location"]).query)
        assert answer["Location"].startswith(REDIRECT), answer["Location"]
        assert location["error"][0] in errors, location


# --- JWTs (simplejwt's, the class after django-oauth-toolkit's) -----------------------


def _jwt(user: Any, **claims: Any) -> JwtAccessToken:
    token = JwtAccessToken.for_user(user)
    for name, value in claims.items():
        token[name] = value
    return token


def _invalid_token(response: Any) -> None:
    # MCP basic/authorization, RFC 6750 §3.1: 401, the error, and where to start over.
    assert response.status_code == 401, response.content
    challenge = response["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge, challenge
    assert f'resource_metadata="{METADATA}"' in challenge, challenge


def test_jwts_with_a_wrong_signature_expired_or_for_another_audience_are_invalid_token(root):
    bound = {"aud": f"{BASE}/mcp", "scope": "mcp:read mcp:write"}
    assert _tools(_mcp(str(_jwt(root, **bound))))  # the same claims, signed right

    forged = pyjwt.encode(
        _jwt(root, **bound).payload,
        "not-the-signing-key-but-of-the-right-length",
        algorithm="HS256",
    )
    _invalid_token(_mcp(forged))
    header, payload, _signature = str(_jwt(root, **bound)).split(".")
    resigned = f"{header}.{payload}.{base64.urlsafe_b64encode(b'x' * 32).rstrip(b'=').decode()}"
    _invalid_token(_mcp(resigned))
    unsigned = pyjwt.encode(_jwt(root, **bound).payload, None, algorithm="none")
    _invalid_token(_mcp(unsigned))

    expired = _jwt(root, **bound)
    expired.set_exp(lifetime=-timedelta(seconds=1))
    _invalid_token(_mcp(str(expired)))

    for audience in ("https://elsewhere.example/mcp", f"{BASE}/mcp/forms", [f"{BASE}/api/"]):
        _invalid_token(_mcp(str(_jwt(root, aud=audience, scope="mcp:read mcp:write"))))


def test_a_jwt_without_the_needed_scope_is_insufficient_scope(root, loan):
    no_read = _mcp(str(_jwt(root, aud=f"{BASE}/mcp", scope="openid")))
    assert no_read.status_code == 403
    assert 'error="insufficient_scope"' in no_read["WWW-Authenticate"]
    read_only = str(_jwt(root, aud=f"{BASE}/mcp", scp=["mcp:read"]))
    assert _tools(_mcp(read_only))
    write = {"name": "give_back_loan", "arguments": {"loanId": loan.pk}}
    refused = _mcp(read_only, "tools/call", write)
    assert refused.status_code == 403
    assert refused["WWW-Authenticate"] == (
        f'Bearer realm="api", error="insufficient_scope", scope="mcp:read mcp:write", '
        f'resource_metadata="{METADATA}"'
    )
    assert Loan.objects.get(pk=loan.pk).status == "out"


# --- refresh rotation -----------------------------------------------------------------


def _refresh(client_id: str, refresh_token: str, **changes: Any) -> Any:
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    return Client().post("/o/token/", {**data, **changes})


def _stored(access: str) -> Any:
    checksum = hashlib.sha256(access.encode()).hexdigest()
    return get_access_token_model().objects.get(token_checksum=checksum)


def test_a_refresh_rotates_and_keeps_the_tokens_audience(browser):
    app = _client_app()
    first = _exchange(_code(browser, app.client_id), app.client_id).json()

    # RFC 8707 §2.2: a resource beyond the grant is refused; the refresh token survives.
    beyond = _refresh(app.client_id, first["refresh_token"], resource="https://elsewhere.example")
    assert beyond.status_code == 400 and beyond.json()["error"] == "invalid_target"

    # Without `resource` (as most clients refresh): the new token is bound as the first.
    second = _refresh(app.client_id, first["refresh_token"])
    assert second.status_code == 200, second.content
    assert second["Cache-Control"] == "no-store"
    body = second.json()
    assert body["refresh_token"] != first["refresh_token"]
    assert body["access_token"] != first["access_token"]
    assert _stored(body["access_token"]).resource == [f"{BASE}/mcp"]
    assert set(body["scope"].split()) == {"mcp:read", "mcp:write"}
    assert _tools(_mcp(body["access_token"]))

    # The refresh token sent is spent; replaying it revokes what was issued from it.
    replay = _refresh(app.client_id, first["refresh_token"])
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    _invalid_token(_mcp(body["access_token"]))
    spent = _refresh(app.client_id, body["refresh_token"])
    assert spent.status_code == 400 and spent.json()["error"] == "invalid_grant"


# --- tokens of another authorization server (RFC 7662 introspection) ------------------

# Another authorization server: django-oauth-toolkit in its own process, with its own
# database, serving only RFC 7662 introspection. It issues the tokens below (by the
# value the test uses) and prints its port and them; it knows a client the resource
# server authenticates as. The resource server is this test project: the tokens are
# not in its database, so it must ask.
AUTHORIZATION_SERVER = r"""
import json, sys
from datetime import timedelta

import django
from django.conf import settings

settings.configure(
    SECRET_KEY="another-authorization-server",
    ALLOWED_HOSTS=["127.0.0.1"],
    INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "oauth2_provider"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": sys.argv[1]}},
    ROOT_URLCONF="__main__",
    MIDDLEWARE=[],
    USE_TZ=True,
    PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
    # Tables straight from the models: a second faster than running the migrations.
    MIGRATION_MODULES={"auth": None, "contenttypes": None, "oauth2_provider": None},
    OAUTH2_PROVIDER={
        "SCOPES": {"mcp:read": "Read", "mcp:write": "Write", "openid": "OpenID"},
        "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    },
)
django.setup()

from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIHandler
from django.core.management import call_command
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from django.urls import path
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, set_token_value
from oauth2_provider.views import IntrospectTokenView

urlpatterns = [path("o/introspect/", IntrospectTokenView.as_view())]

call_command("migrate", verbosity=0, run_syncdb=True)
resource_server = Application.objects.create(
    name="resource server", client_id="resource-server", client_secret="rs-secret",
    client_type="confidential", authorization_grant_type="client-credentials",
)
host = Application.objects.create(
    name="a host", client_type="public", authorization_grant_type="authorization-code",
    redirect_uris="http://127.0.0.1:9/callback",
)
root = get_user_model().objects.create(username="root")
resource = sys.argv[2]
tokens = {
    "rw": (root, "mcp:read mcp:write", [resource], 3600),
    "read": (root, "mcp:read", [resource], 3600),
    "elsewhere": (root, "mcp:read mcp:write", ["https://elsewhere.example/mcp"], 3600),
    "openid": (root, "openid", [resource], 3600),
    "expired": (root, "mcp:read mcp:write", [resource], -60),
    "machine": (None, "mcp:read mcp:write", [resource], 3600),
}
for value, (user, scope, audience, seconds) in tokens.items():
    token = AccessToken(
        user=user, application=host, scope=scope, resource=audience,
        expires=timezone.now() + timedelta(seconds=seconds),
    )
    set_token_value(token, "as-" + value)
    token.save()

class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass

server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
server.set_app(WSGIHandler())
print(json.dumps({"port": server.server_address[1]}), flush=True)
server.serve_forever()
"""
INTROSPECTING = "affordances.mcp.oauth.OAuth2Validator"


@pytest.fixture(scope="module")
def authorization_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The other server's introspection endpoint; stopped after the module."""
    database = tmp_path_factory.mktemp("other-as") / "db.sqlite3"
    environ = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    process = subprocess.Popen(
        [sys.executable, "-c", AUTHORIZATION_SERVER, str(database), f"{BASE}/mcp"],
        stdout=subprocess.PIPE,
        text=True,
        env=environ,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        line = process.stdout.readline() if ready else ""
        assert line, f"the authorization server did not start (exit {process.poll()})"
        yield f"http://127.0.0.1:{json.loads(line)['port']}/o/introspect/"
    finally:
        process.terminate()
        process.wait(10)


def _introspecting(url: str, **changes: Any) -> Any:
    return override_settings(
        OAUTH2_PROVIDER={
            **django_settings.OAUTH2_PROVIDER,
            "OAUTH2_VALIDATOR_CLASS": INTROSPECTING,
            "RESOURCE_SERVER_INTROSPECTION_URL": url,
            "RESOURCE_SERVER_INTROSPECTION_CREDENTIALS": ("resource-server", "rs-secret"),
            **changes,
        }
    )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def test_tokens_of_another_server_are_introspected_with_audience_and_scopes(
    authorization_server, root, loan
):
    with _introspecting(authorization_server, RESOURCE_SERVER_INTROSPECTION_CREDENTIALS=("x", "y")):
        _invalid_token(_mcp("as-read"))  # not a client it answers
    # The other server's "root" is the local root because an operator linked them.
    OAuthIdentity.objects.create(issuer=_origin(authorization_server), subject="root", user=root)
    with _introspecting(authorization_server):
        rw = "as-rw"
        tools = _tools(_mcp(rw))
        assert "give_back_loan" in tools
        call = {"name": "give_back_loan", "arguments": {"loanId": loan.pk}}
        done = _mcp(rw, "tools/call", call)
        assert done.status_code == 200 and not done.json()["result"]["isError"], done.content
        assert Loan.objects.get(pk=loan.pk).status == "returned"
        # Kept for the next request, bound as the other server bound it, hashed at rest.
        cached = _stored(rw)
        assert cached.user == root and cached.application is None and cached.token == ""
        assert cached.resource == [f"{BASE}/mcp"]

        read = _mcp("as-read", "tools/call", call)
        assert read.status_code == 403 and 'error="insufficient_scope"' in read["WWW-Authenticate"]
        assert _tools(_mcp("as-read")) == tools
        assert _mcp("as-openid").status_code == 403
        for refused in ("as-elsewhere", "as-expired", "as-machine", "as-never-issued"):
            _invalid_token(_mcp(refused))


class _Failing(BaseHTTPRequestHandler):
    """Introspection endpoints that fail, each its own way (the path says how)."""

    ANSWERS: ClassVar[dict[str, tuple[int, str, bytes]]] = {
        "/500": (500, "application/json", b'{"active": true, "username": "root"}'),
        "/html": (200, "text/html", b"<html>Sign in</html>"),
        "/list": (200, "application/json", b'[{"active": true}]'),
        "/string": (200, "application/json", b'"active"'),
        "/exp": (200, "application/json", b'{"active": true, "username": "root", "exp": "soon"}'),
        "/huge-exp": (
            200,
            "application/json",
            b'{"active": true, "username": "root", "exp": 1e300}',
        ),
        "/int-exp": (
            200,
            "application/json",
            b'{"active": true, "username": "root", "exp": 1' + b"0" * 400 + b"}",
        ),
        "/user": (200, "application/json", b'{"active": true, "username": {"id": 1}}'),
        "/long-user": (
            200,
            "application/json",
            json.dumps({"active": True, "username": "u" * 400}).encode(),
        ),
        "/scope": (200, "application/json", b'{"active": true, "username": "root", "scope": 7}'),
        "/nul": (
            200,
            "application/json",
            b'{"active": true, "username": "root", "aud": ["http://testserver/mcp\\u0000"]}',
        ),
        "/aud": (200, "application/json", b'{"active": true, "username": "root", "aud": {"a": 1}}'),
        "/active-string": (200, "application/json", b'{"active": "true", "username": "root"}'),
        "/big": (200, "application/json", b'{"active": true, "pad": "' + b"x" * 100_000 + b'"}'),
    }

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/slow":
            time.sleep(1.5)
        status, kind, body = self.ANSWERS.get(self.path, (200, "application/json", b"{}"))
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # /slow: the resource server gave up waiting, as it should

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def failing_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_failing_introspection_endpoint_is_a_401_challenge_never_a_500(
    failing_server, root, monkeypatch
):
    from affordances.mcp.oauth import OAuth2Validator

    monkeypatch.setattr(OAuth2Validator, "introspection_timeout", 0.5)
    urls = [failing_server + path for path in [*_Failing.ANSWERS, "/slow"]]
    urls += [f"http://127.0.0.1:{_closed_port()}/introspect/", "file:///etc/passwd"]
    for url in urls:
        with _introspecting(url):
            _invalid_token(_mcp("a-token-nobody-here-knows"))
    assert not get_access_token_model().objects.exists()  # nothing kept from them
