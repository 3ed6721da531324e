# ruff: noqa: F811
"""A person ends every session they started (issue 50: O1, O6, O8, O7).

The `oauth` extra's tokens are rows: a password change, a deactivation or a deletion of
the user revokes them (affordances.credentials), the refresh path and the code exchange
check the user (affordances.mcp.oauth.OAuth2Validator), and a replayed authorization
code revokes what it was exchanged for (RFC 6749 §4.1.2). On the REST face, an OAuth
token's scopes mean what they mean on MCP.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from oauth2_provider.models import get_grant_model, get_refresh_token_model
from rest_framework.authentication import SessionAuthentication

from affordances.credentials import revoke_oauth_credentials
from affordances.mcp.oauth import OAuth2Authentication
from affordances.models import OAuthCodeExchange
from tests.generic import oauth_api
from tests.generic.lending import Loan
from tests.test_mcp_oauth import (  # noqa: F401 (fixtures)
    _client_app,
    _code,
    _exchange,
    _invalid_token,
    _mcp,
    _refresh,
    _token,
    _tools,
    browser,
    loan,
    project,
    root,
)


def _pair(browser: Client) -> tuple[Any, dict[str, Any]]:
    app = _client_app()
    answer = _exchange(_code(browser, app.client_id), app.client_id)
    assert answer.status_code == 200, answer.content
    tokens = answer.json()
    assert _tools(_mcp(tokens["access_token"]))
    return app, tokens


def _refused_everywhere(app: Any, tokens: dict[str, Any]) -> None:
    _invalid_token(_mcp(tokens["access_token"]))
    again = _refresh(app.client_id, tokens["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant", again.content


# --- O1: a password change, a deactivation, a deletion --------------------------------


def test_a_password_change_revokes_the_users_oauth_tokens_and_codes(browser, root):
    app, tokens = _pair(browser)
    pending = _code(browser, app.client_id)  # a code not exchanged yet
    root.set_password("a-new-password")
    root.save()
    _refused_everywhere(app, tokens)
    late = _exchange(pending, app.client_id)
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
    assert not get_refresh_token_model().objects.filter(revoked__isnull=True).exists()


def test_a_deactivation_revokes_them_for_good(browser, root):
    app, tokens = _pair(browser)
    root.is_active = False
    root.save()
    _refused_everywhere(app, tokens)
    # Reactivated, the person's old tokens stay dead: they ended those sessions.
    root.is_active = True
    root.save()
    _refused_everywhere(app, tokens)


def test_a_deleted_users_tokens_are_gone(browser, root):
    app, tokens = _pair(browser)
    root.delete()
    _refused_everywhere(app, tokens)


def test_other_saves_of_the_user_keep_the_sessions(browser, root):
    app, tokens = _pair(browser)
    root.first_name = "Ada"
    root.save()
    root.save(update_fields=["last_login"])  # what every login does
    assert _tools(_mcp(tokens["access_token"]))
    assert _refresh(app.client_id, tokens["refresh_token"]).status_code == 200


def test_revoke_oauth_credentials_is_there_for_writes_no_signal_sees(browser, root):
    app, tokens = _pair(browser)
    get_user_model().objects.filter(pk=root.pk).update(password="!")  # no signal
    revoke_oauth_credentials(root.pk)
    _refused_everywhere(app, tokens)


# --- O6: the refresh path checks the user ----------------------------------------------


def test_a_deactivated_users_refresh_token_is_invalid_grant_even_unseen(browser, root):
    app, tokens = _pair(browser)
    # A deactivation no receiver saw (a queryset update): the refresh path itself looks.
    get_user_model().objects.filter(pk=root.pk).update(is_active=False)
    refused = _refresh(app.client_id, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    _invalid_token(_mcp(tokens["access_token"]))


def test_a_deactivated_users_code_is_refused(browser, root):
    app = _client_app()
    code = _code(browser, app.client_id)
    get_user_model().objects.filter(pk=root.pk).update(is_active=False)
    refused = _exchange(code, app.client_id)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert not get_refresh_token_model().objects.exists()


# --- O8: a replayed code revokes what it issued ----------------------------------------


def test_a_replayed_code_revokes_the_tokens_it_was_exchanged_for(browser):
    app = _client_app()
    code = _code(browser, app.client_id)
    first = _exchange(code, app.client_id)
    assert first.status_code == 200
    tokens = first.json()
    # The family goes too: a token refreshed from the first pair before the replay.
    refreshed = _refresh(app.client_id, tokens["refresh_token"]).json()
    replay = _exchange(code, app.client_id)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    _invalid_token(_mcp(tokens["access_token"]))
    _refused_everywhere(app, refreshed)


def test_an_unknown_code_revokes_nothing(browser):
    app, tokens = _pair(browser)
    assert _exchange("never-issued", app.client_id).status_code == 400
    assert _tools(_mcp(tokens["access_token"]))


def test_exchanged_code_records_expire(browser, settings):
    _pair(browser)
    assert OAuthCodeExchange.objects.count() == 1
    OAuthCodeExchange.objects.update(expires_at="2000-01-01T00:00:00Z")
    call_command("expire_oauth_clients", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert not OAuthCodeExchange.objects.exists()
    assert not get_grant_model().objects.exists()


# --- O7: scopes mean the same on the REST face ------------------------------------------


@pytest.fixture
def rest_with_oauth(project: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # What DEFAULT_AUTHENTICATION_CLASSES would give the viewset (DRF binds that setting
    # when the class is defined, before a test could change it).
    classes = [OAuth2Authentication, SessionAuthentication]
    monkeypatch.setattr(oauth_api.LoanViewSet, "authentication_classes", classes)


def _rest(method: str, path: str, token: str) -> Any:
    call = getattr(Client(), method)
    return call(path, headers={"Authorization": f"Bearer {token}"}, content_type="application/json")


def test_a_read_token_reads_on_rest_and_runs_nothing(rest_with_oauth, root, loan):
    # Not bound to /mcp (a client that sent no resource indicator): valid on REST.
    read = _token(root, scope="mcp:read", resource=[], value="read-only-token-0001")
    assert _rest("get", "/api/loans/", read).status_code == 200
    assert _rest("get", f"/api/loans/{loan.pk}/", read).status_code == 200
    refused = _rest("post", f"/api/loans/{loan.pk}/give_back/", read)
    assert refused.status_code == 401, refused.content
    assert Loan.objects.get(pk=loan.pk).status == "out"


def test_a_write_token_runs_on_rest_and_no_scope_does_nothing(rest_with_oauth, root, loan):
    none = _token(root, scope="", resource=[], value="no-scope-token-00001")
    assert _rest("get", "/api/loans/", none).status_code == 401
    write = _token(root, scope="mcp:read mcp:write", resource=[], value="read-write-token-001")
    done = _rest("post", f"/api/loans/{loan.pk}/give_back/", write)
    assert done.status_code == 200, done.content
    assert Loan.objects.get(pk=loan.pk).status == "returned"
