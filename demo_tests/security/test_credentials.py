"""Stolen bearer tokens and forged claims (finding F6 and its follow-up), kept as tests.

F6: a token outlived the password it was issued under — after a password change the old
access token still answered 200 on REST and MCP, and the old refresh token stayed valid
and reusable any number of times. Now every token carries a hash of the user's password
hash (``SIMPLE_JWT["CHECK_REVOKE_TOKEN"]``), checked on every request and on refresh,
and a refresh token is used once (rotation, ``token_blacklist``).

Follow-up: a token signed with the real key whose ``exp`` was a string, ``1e300`` or
after the year 9999 was a 500; ``iat``/``nbf`` of ``true`` or before the year 1 were
taken. Each is a 401 like any other invalid token.

Everything goes through the whole stack: tokens from ``POST /api/token/``, then
``GET /api/orders/``, ``POST /mcp`` (``tools/list``) and ``POST /api/token/refresh/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jwt
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection
from rest_framework.test import APIClient
from rest_framework_simplejwt.state import token_backend
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from affordances.problems import ProblemCode, problem_type, title_of
from demo_tests.conftest import DEMO_PASSWORD, Demo
from tests.mcp_wire import Wire

NEW_PASSWORD = "a-new-password-after-the-theft"
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_UNAUTHORIZED = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Unauthorized: the access token is invalid or expired."},
}
INVALID_CREDENTIALS = "The credentials are invalid or expired."
NO_ACTIVE_ACCOUNT = "No active account found for the given token."


# --- the three doors a token opens ----------------------------------------------------


def obtain(username: str = "support", password: str = DEMO_PASSWORD) -> dict[str, str]:
    response = APIClient().post(
        "/api/token/", {"username": username, "password": password}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


MCP_INVALID_TOKEN_CHALLENGE = (
    'Bearer realm="api", '
    'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", '
    'scope="mcp:read mcp:write", error="invalid_token"'
)


def rest(access: str) -> Any:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access}")
    return client.get("/api/orders/")


def mcp(access: str) -> Any:
    return Wire(access).post(TOOLS_LIST)


def refresh(token: str) -> Any:
    return APIClient().post("/api/token/refresh/", {"refresh": token}, format="json")


def assert_problem(response: Any, detail: str) -> None:
    assert response.status_code == 401, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response.json() == {
        "type": problem_type(ProblemCode.NOT_AUTHENTICATED),
        "title": title_of(ProblemCode.NOT_AUTHENTICATED),
        "status": 401,
        "code": ProblemCode.NOT_AUTHENTICATED.value,
        "detail": detail,
    }


def assert_refused_everywhere(access: str) -> None:
    """The access token is a 401 on REST and on MCP, in each face's one shape."""
    assert_problem(rest(access), INVALID_CREDENTIALS)
    answer = mcp(access)
    assert answer.status_code == 401, answer.content
    # The challenge of the first authentication class, as on REST (issue 36, finding 9),
    # pointing at the endpoint's OAuth metadata (issue 39).
    assert answer["WWW-Authenticate"] == MCP_INVALID_TOKEN_CHALLENGE
    assert answer.json() == MCP_UNAUTHORIZED


def assert_accepted_everywhere(access: str) -> None:
    assert rest(access).status_code == 200
    answer = mcp(access)
    assert answer.status_code == 200, answer.content
    assert answer.json()["result"]["tools"]


# --- F6: a password change invalidates every token issued before it -------------------


def _change_password(username: str, how: str) -> None:
    users = get_user_model().objects
    if how == "set_password":
        user = users.get(username=username)
        user.set_password(NEW_PASSWORD)
        user.save()
    else:
        # No save(), no signal: the tokens are bound to the stored hash, not to an event.
        users.filter(username=username).update(password=make_password(NEW_PASSWORD))


@pytest.mark.parametrize("how", ["set_password", "queryset update"])
def test_a_password_change_refuses_the_old_access_token_on_rest_and_mcp(
    demo: Demo, how: str
) -> None:
    stolen = obtain()["access"]
    assert_accepted_everywhere(stolen)

    _change_password("support", how)

    assert_refused_everywhere(stolen)
    # The owner, with the new password, is in.
    assert_accepted_everywhere(obtain(password=NEW_PASSWORD)["access"])


@pytest.mark.parametrize("how", ["set_password", "queryset update"])
def test_a_password_change_refuses_the_old_refresh_token(demo: Demo, how: str) -> None:
    stolen = obtain()["refresh"]

    _change_password("support", how)

    response = refresh(stolen)
    assert_problem(response, NO_ACTIVE_ACCOUNT)
    assert response["Cache-Control"] == "no-store"
    assert set(refresh(obtain(password=NEW_PASSWORD)["refresh"]).json()) == {"access", "refresh"}


def test_a_password_change_refuses_tokens_from_a_rotation_before_it(demo: Demo) -> None:
    rotated = refresh(obtain()["refresh"]).json()

    _change_password("support", "set_password")

    assert_refused_everywhere(rotated["access"])
    assert_problem(refresh(rotated["refresh"]), NO_ACTIVE_ACCOUNT)


def test_deactivation_refuses_the_access_and_refresh_tokens(demo: Demo) -> None:
    # simplejwt checks is_active on every request and every refresh (CHECK_USER_IS_ACTIVE):
    # kept here with the rest of the credential lifecycle.
    tokens = obtain()
    get_user_model().objects.filter(username="support").update(is_active=False)

    assert_refused_everywhere(tokens["access"])
    assert_problem(refresh(tokens["refresh"]), NO_ACTIVE_ACCOUNT)


# --- F6: a refresh token is used once ---------------------------------------------------


def test_a_refresh_rotates_and_the_used_refresh_token_is_refused(demo: Demo) -> None:
    first = obtain()["refresh"]

    rotated = refresh(first)
    assert rotated.status_code == 200
    assert set(rotated.json()) == {"access", "refresh"}
    second = rotated.json()["refresh"]
    assert second != first
    assert_accepted_everywhere(rotated.json()["access"])

    reused = refresh(first)
    assert_problem(reused, "Token is blacklisted")
    assert reused["Cache-Control"] == "no-store"
    # Each rotated token is single-use in turn.
    third = refresh(second)
    assert third.status_code == 200
    assert_problem(refresh(second), "Token is blacklisted")
    assert refresh(third.json()["refresh"]).status_code == 200


@contextmanager
def _another_request_blacklists_it_first(refresh_token: str) -> Iterator[list[str]]:
    """Between this request's blacklist check and its own blacklisting, a concurrent
    request with the same token blacklists it (and commits): what two racing refreshes
    look like to the slower one."""
    jti = jwt.decode(refresh_token, options={"verify_signature": False})["jti"]
    raced: list[str] = []

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # The blacklisting's own look-up (a plain SELECT on the table; the check made
        # on reading the token joins the outstanding tokens).
        if (
            not raced
            and sql.lstrip().upper().startswith("SELECT")
            and 'FROM "token_blacklist_blacklistedtoken"' in sql
            and "JOIN" not in sql.upper()
        ):
            raced.append(jti)
            BlacklistedToken.objects.create(token=OutstandingToken.objects.get(jti=jti))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(wrapper):
        yield raced


def test_two_racing_uses_of_one_refresh_token_rotate_it_once(demo: Demo) -> None:
    stolen = obtain()["refresh"]

    with _another_request_blacklists_it_first(stolen) as raced:
        response = refresh(stolen)

    assert raced, "the refresh never looked the token up in the blacklist"
    assert_problem(response, "Token is blacklisted")


# --- forged with the real key: malformed registered claims ----------------------------


class Raw(str):
    """A claim value written into the token's JSON as it is (not a JSON string)."""


# Not writable by json.dumps; Python's json (PyJWT's) reads it as a float infinity.
INFINITY = Raw("1e400")

# 500s (exp) or accepted (iat, nbf: int(true) is 1, and PyJWT takes any past) on main.
FORGED_ACCESS = [
    ("exp", "9999999999"),
    ("exp", 1e300),
    ("exp", 10**18),
    ("exp", 253402300800),  # 10000-01-01
    ("exp", 1e18),
    ("iat", True),
    ("iat", -(10**18)),
    ("iat", -62135596801),  # a second before 0001-01-01
    ("nbf", True),
    ("nbf", -(10**18)),
]
# What refresh tokens add: the blacklist stores jti in a CharField(max_length=255).
FORGED_REFRESH = [*FORGED_ACCESS, ("jti", "x" * 256)]
# Refused on main already (PyJWT's own checks): kept refused.
ALREADY_REFUSED = [
    ("exp", None),
    ("exp", [1]),
    ("exp", "abc"),
    ("exp", {"a": 1}),
    ("exp", INFINITY),
    ("iat", None),
    ("iat", [1]),
    ("iat", INFINITY),
    ("nbf", None),
    ("nbf", "abc"),
    ("nbf", INFINITY),
    ("jti", None),  # PyJWT wants a string
    ("jti", ["a"]),
]


def forge(token: Any, claim: str, value: object) -> str:
    """``token`` (a real one, for a real user) with ``claim`` set to ``value``, signed
    with the project's key."""
    payload = dict(token.payload)
    payload[claim] = "__RAW__" if isinstance(value, Raw) else value
    body = json.dumps(payload).replace('"__RAW__"', str(value))
    return jwt.api_jws.encode(
        body.encode(), token_backend.prepared_signing_key, algorithm=token_backend.algorithm
    )


def _ids(case: tuple[str, object]) -> str:
    claim, value = case
    return f"{claim}={value!r}"[:40]


@pytest.mark.parametrize("case", FORGED_ACCESS, ids=_ids)
def test_an_access_token_with_a_malformed_time_claim_is_a_401_on_rest_and_mcp(
    demo: Demo, case: tuple[str, object]
) -> None:
    claim, value = case
    forged = forge(AccessToken.for_user(demo.users["support"]), claim, value)

    assert_refused_everywhere(forged)


@pytest.mark.parametrize("case", FORGED_REFRESH, ids=_ids)
def test_a_refresh_token_with_a_malformed_registered_claim_is_a_401(
    demo: Demo, case: tuple[str, object]
) -> None:
    claim, value = case
    forged = forge(RefreshToken.for_user(demo.users["support"]), claim, value)

    response = refresh(forged)

    assert_problem(response, "Token is invalid")
    assert response["Cache-Control"] == "no-store"


@pytest.mark.parametrize("case", ALREADY_REFUSED, ids=_ids)
def test_claims_refused_before_stay_refused(demo: Demo, case: tuple[str, object]) -> None:
    claim, value = case
    user = demo.users["support"]

    assert_refused_everywhere(forge(AccessToken.for_user(user), claim, value))
    assert_problem(refresh(forge(RefreshToken.for_user(user), claim, value)), "Token is invalid")


def test_the_forging_helper_signs_tokens_the_project_accepts(demo: Demo) -> None:
    # Otherwise every 401 above could be the signature's.
    user = demo.users["support"]
    # A claim of no meaning here ("scope" would narrow the token on MCP: issue 39).
    fine = forge(AccessToken.for_user(user), "note", "anything")
    assert_accepted_everywhere(fine)
    assert refresh(forge(RefreshToken.for_user(user), "note", "anything")).status_code == 200


# --- issue 50 (O1, O6): the same rule for the OAuth tokens of /o/ ------------------------


def _oauth_pair(username: str = "support") -> tuple[str, str, str]:
    """An access and a refresh token of the demo's authorization server (as /o/token/
    stores them), bound to /mcp; and the public client's id."""
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import (
        get_access_token_model,
        get_application_model,
        get_refresh_token_model,
        set_token_value,
    )

    user = get_user_model().objects.get(username=username)
    app = get_application_model().objects.create(
        name="host",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:9/callback",
    )
    access = get_access_token_model()(
        user=user,
        application=app,
        scope="mcp:read mcp:write",
        expires=timezone.now() + timedelta(hours=1),
        resource=["http://testserver/mcp"],
    )
    set_token_value(access, f"oauth-access-of-{username}")
    access.save()
    refresh_token = get_refresh_token_model()(
        user=user, application=app, access_token=access, resource=access.resource
    )
    set_token_value(refresh_token, f"oauth-refresh-of-{username}")
    refresh_token.save()
    return f"oauth-access-of-{username}", f"oauth-refresh-of-{username}", app.client_id


def _oauth_refresh(client_id: str, token: str) -> Any:
    return APIClient().post(
        "/o/token/", {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    )


@pytest.mark.parametrize("how", ["password", "deactivation"])
def test_a_password_change_or_deactivation_ends_the_oauth_sessions_too(
    demo: Demo, how: str
) -> None:
    access, refresh_token, client_id = _oauth_pair()
    assert mcp(access).status_code == 200
    user = get_user_model().objects.get(username="support")
    if how == "password":
        user.set_password(NEW_PASSWORD)
    else:
        user.is_active = False
    user.save()

    answer = mcp(access)
    assert answer.status_code == 401 and answer.json() == MCP_UNAUTHORIZED
    refused = _oauth_refresh(client_id, refresh_token)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    # Reactivated, the old sessions stay ended.
    user.is_active = True
    user.save()
    assert mcp(access).status_code == 401
    assert _oauth_refresh(client_id, refresh_token).status_code == 400
