# ruff: noqa: F811
"""Registration a public server can afford, consent that shows what is at stake, and
foreign tokens mapped safely (issue 50: O2, O3, O4, O5, O9, O10).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.checks import run_checks
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

from affordances.models import OAuthIdentity
from tests.test_mcp_oauth import (  # noqa: F401 (fixtures)
    BASE,
    REDIRECT,
    _affordances,
    _authorize_query,
    _client_app,
    _code,
    _exchange,
    _invalid_token,
    _mcp,
    _register,
    _tools,
    browser,
    project,
    root,
)

HOST = {
    "client_name": "A host",
    "redirect_uris": [REDIRECT],
    "grant_types": ["authorization_code", "refresh_token"],
    "token_endpoint_auth_method": "none",
}


def _registered(**changes: Any) -> dict[str, Any]:
    response = _register({**HOST, **changes})
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


def _put(body: dict[str, Any], changes: dict[str, Any]) -> Any:
    return Client().put(
        urlsplit(body["registration_client_uri"]).path,
        data=json.dumps({**HOST, **changes}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {body['registration_access_token']}"},
    )


def _rates(**rates: str | None) -> Any:
    return override_settings(AFFORDANCES=_affordances(OAUTH_THROTTLE_RATES=rates))


# --- O2: throttles, no hashing for public clients, expiry ----------------------------


def test_registration_is_rate_limited_per_address(project):
    with _rates(register="2/min"):
        assert _register(HOST).status_code == 201
        assert _register(HOST).status_code == 201
        limited = _register(HOST)
        assert limited.status_code == 429 and limited.json()["error"] == "invalid_request"
        assert int(limited["Retry-After"]) >= 1
        other = Client(REMOTE_ADDR="192.0.2.7").post(
            "/o/register/", data=json.dumps(HOST), content_type="application/json"
        )
        assert other.status_code == 201  # another address counts on its own
    assert get_application_model().objects.count() == 3


def test_the_token_endpoint_is_rate_limited_per_address(project):
    with _rates(token="2/min"):
        for _ in range(2):
            assert _exchange("no-such-code", "no-such-client").status_code in {400, 401}
        assert _exchange("no-such-code", "no-such-client").status_code == 429


def test_a_public_client_has_no_secret_to_hash(browser):
    body = _registered()
    assert "client_secret" not in body
    stored = get_application_model().objects.get(client_id=body["client_id"])
    assert stored.client_secret == "" and stored.hash_client_secret is False
    # It still logs in (PKCE, no secret), and no secret authenticates as it.
    answer = _exchange(_code(browser, body["client_id"]), body["client_id"])
    assert answer.status_code == 200, answer.content
    fake = _exchange("x", body["client_id"], {"client_secret": "guess"})
    assert fake.status_code in {400, 401} and fake.json()["error"] == "invalid_client"


def test_a_confidential_client_still_gets_a_hashed_secret(project):
    body = _registered(token_endpoint_auth_method="client_secret_basic")
    stored = get_application_model().objects.get(client_id=body["client_id"])
    assert body["client_secret"] and stored.client_secret.startswith("md5$")


def test_registration_tokens_expire(project):
    body = _registered()
    token = get_access_token_model().objects.get(application__client_id=body["client_id"])
    assert token.expires < timezone.now() + timedelta(days=31)


def test_unused_self_registered_clients_and_expired_registration_tokens_expire(browser):
    application_model = get_application_model()
    unused = _registered()["client_id"]
    used = _registered()["client_id"]
    assert _exchange(_code(browser, used), used).status_code == 200
    fresh = _registered()["client_id"]
    manual = _client_app().client_id  # made by the operator: never expired
    old = timezone.now() - timedelta(days=2)
    application_model.objects.exclude(client_id=fresh).update(created=old)
    get_access_token_model().objects.filter(application__client_id=fresh).update(expires=old)
    out = io.StringIO()
    call_command("expire_oauth_clients", stdout=out)
    left = set(application_model.objects.values_list("client_id", flat=True))
    assert left == {used, fresh, manual} and unused not in left, out.getvalue()
    assert not get_access_token_model().objects.filter(application__client_id=fresh).exists()


# --- O5: one policy for POST and PUT ---------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"token_endpoint_auth_method": "client_secret_basic"}, "invalid_client_metadata"),
        ({"client_name": "Claude\x00"}, "invalid_client_metadata"),
    ],
)
def test_an_update_meets_the_registrations_policy(project, changes, error):
    body = _registered()
    refused = _put(body, changes)
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"] == error
    stored = get_application_model().objects.get(client_id=body["client_id"])
    assert stored.redirect_uris == REDIRECT and stored.authorization_grant_type == (
        "authorization-code"
    )
    assert stored.client_type == "public" and stored.name == "A host"


def test_a_good_update_is_applied(project):
    body = _registered()
    done = _put(body, {"redirect_uris": ["https://host.example/cb"], "client_name": "Renamed"})
    assert done.status_code == 200, done.content
    assert done.json()["redirect_uris"] == ["https://host.example/cb"]


def test_an_update_needs_the_registration_token(project):
    body = _registered()
    refused = _put({**body, "registration_access_token": "wrong"}, {})
    assert refused.status_code == 401


# --- O9: control characters refused before the database --------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"client_name": "Claude\x00"},
        {"client_name": "Claude\x1b[2J"},
        {"redirect_uris": ["https://host.example/cb\x00"]},
        {"redirect_uris": ["http://127.0.0.1:9/c\x00b"]},
        {"redirect_uris": ["https://host.example/\x7fcb"]},
        {"client_name": 7},
    ],
)
def test_control_characters_are_invalid_client_metadata(project, changes):
    response = _register({**HOST, **changes})
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_client_metadata"
    assert not get_application_model().objects.exists()


# --- O10: loopback redirects, as the MCP spec allows, with https-only settings ---------

HTTPS_ONLY = {**django_settings.OAUTH2_PROVIDER, "ALLOWED_REDIRECT_URI_SCHEMES": ["https"]}


def test_loopback_redirects_work_where_only_https_is_allowed(browser):
    with override_settings(OAUTH2_PROVIDER=HTTPS_ONLY):
        for uri in ("http://127.0.0.1:33418/callback", "http://[::1]:3/cb", "http://localhost/"):
            assert _register({**HOST, "redirect_uris": [uri]}).status_code == 201, uri
        for uri in ("http://host.example/cb", "http://10.0.0.1/cb"):
            refused = _register({**HOST, "redirect_uris": [uri]})
            assert refused.json()["error"] == "invalid_redirect_uri", uri
        # The whole flow to a desktop host's loopback listener.
        client_id = _registered()["client_id"]
        answer = _exchange(_code(browser, client_id), client_id)
        assert answer.status_code == 200, answer.content
        # An update keeps them too.
        body = _registered()
        assert _put(body, {"redirect_uris": ["http://127.0.0.1:4/cb"]}).status_code == 200
        # django-oauth-toolkit's deploy warning has nothing to warn about.
        found = {m.id for m in run_checks(include_deployment_checks=True)}
        assert "oauth2_provider.W008" not in found


# --- O3: consent that shows what is at stake ------------------------------------------


def test_the_consent_page_names_the_destination_and_the_clients_standing(browser):
    body = _registered(client_name="Claude", redirect_uris=["https://attacker.example/cb"])
    query = _authorize_query(body["client_id"], {"redirect_uri": "https://attacker.example/cb"})
    page = browser.get("/o/authorize/?" + urlencode(query))
    assert page.status_code == 200, page.content
    html = page.content.decode()
    assert '<code id="redirect-host">attacker.example</code>' in html
    assert 'id="unverified"' in html and "registered itself" in html
    assert f"<code>{BASE}/mcp</code>" in html  # the resource
    assert "<li>Read</li>" in html and "<li>Run operations</li>" in html  # scopes in words
    assert 'id="authorizationForm"' in html and 'name="allow"' in html


def test_an_operators_client_is_not_called_unverified(browser):
    app = _client_app()
    page = browser.get("/o/authorize/?" + urlencode(_authorize_query(app.client_id)))
    html = page.content.decode()
    assert page.status_code == 200 and 'id="unverified"' not in html
    assert '<code id="redirect-host">127.0.0.1:9</code>' in html


def test_redirect_hosts_outside_the_allowlist_get_no_code(browser):
    attacker = get_application_model().objects.create(  # registered before the allowlist
        name="Claude",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="https://attacker.example/cb",
    )
    allowlist = _affordances(OAUTH_REDIRECT_HOSTS=[".trusted.example"])
    with override_settings(AFFORDANCES=allowlist):
        refused = _register({**HOST, "redirect_uris": ["https://attacker.example/cb"]})
        assert refused.json()["error"] == "invalid_redirect_uri"
        assert _register({**HOST, "redirect_uris": ["https://app.trusted.example/cb"]})
        assert _register(HOST).status_code == 201  # loopback: the user's own machine
        query = _authorize_query(
            attacker.client_id, {"redirect_uri": "https://attacker.example/cb"}
        )
        page = browser.get("/o/authorize/?" + urlencode(query))
        assert page.status_code == 400 and "attacker.example" in page.content.decode()
        posted = browser.post("/o/authorize/", {**query, "allow": "Authorize"})
        assert posted.status_code == 400 and "Location" not in posted


# --- O4: foreign tokens map by (issuer, subject) ---------------------------------------


class _Introspection(BaseHTTPRequestHandler):
    """Another authorization server's introspection answers, by the token posted."""

    ANSWERS: ClassVar[dict[str, dict[str, Any]]] = {
        "admin": {"username": "root"},  # the local superuser's name
        "newcomer": {"username": "newcomer", "sub": "n-1"},
        "by-sub": {"sub": "s-42", "username": "someone"},
        "with-iss": {"sub": "s-42", "iss": "https://as.example"},
    }

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        token = raw.partition("token=")[2]
        answer = {
            "active": True,
            "scope": "mcp:read mcp:write",
            "aud": [f"{BASE}/mcp"],
            **self.ANSWERS.get(token, {}),
        }
        if token not in self.ANSWERS:
            answer = {"active": False}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def introspection() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Introspection)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _introspecting(url: str, **affordances: Any) -> Any:
    from tests.test_mcp_oauth import _introspecting as configured

    class Both:
        def __enter__(self) -> None:
            self.oauth = configured(url + "/introspect/")
            self.oauth.__enter__()
            self.settings = override_settings(AFFORDANCES=_affordances(**affordances))
            self.settings.__enter__()

        def __exit__(self, *exc: Any) -> None:
            self.settings.__exit__(*exc)
            self.oauth.__exit__(*exc)

    return Both()


def test_a_foreign_token_naming_a_local_superuser_is_refused(introspection, root):
    for create in (False, True):
        with _introspecting(introspection, OAUTH_CREATE_USERS=create):
            _invalid_token(_mcp("admin"))
    assert not get_access_token_model().objects.exists()


def test_unknown_foreign_users_are_not_created_by_default(introspection, root):
    with _introspecting(introspection):
        _invalid_token(_mcp("newcomer"))
    assert not get_user_model().objects.filter(username="newcomer").exists()


def test_with_creation_on_a_new_user_is_plain_and_linked(introspection, root):
    with _introspecting(introspection, OAUTH_CREATE_USERS=True):
        assert _mcp("newcomer").status_code == 200
    user = get_user_model().objects.get(username="newcomer")
    assert not (user.is_staff or user.is_superuser or user.has_usable_password())
    link = OAuthIdentity.objects.get(user=user)
    assert (link.issuer, link.subject) == (introspection, "n-1")


def test_a_linked_identity_is_its_user_by_issuer_and_subject(introspection, root):
    OAuthIdentity.objects.create(issuer=introspection, subject="s-42", user=root)
    with _introspecting(introspection):
        assert "give_back_loan" in _tools(_mcp("by-sub"))
        # The same subject at another issuer is someone else.
        _invalid_token(_mcp("with-iss"))


def test_only_a_superuser_links_an_identity_in_the_admin(db):
    # A link is a way into its account: staff with every model permission still may not.
    from django.contrib import admin
    from django.contrib.auth.models import Permission
    from django.test import RequestFactory

    identities = admin.site._registry[OAuthIdentity]
    staff = get_user_model().objects.create_user("staff", password="x", is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="oauthidentity"))
    boss = get_user_model().objects.create_superuser("boss", password="x")
    for user, allowed in ((staff, False), (boss, True)):
        request = RequestFactory().get("/admin/")
        request.user = get_user_model().objects.get(pk=user.pk)
        assert identities.has_module_permission(request) is allowed
        assert identities.has_view_permission(request) is allowed
        assert identities.has_add_permission(request) is allowed
        assert identities.has_change_permission(request) is allowed
        assert identities.has_delete_permission(request) is allowed
