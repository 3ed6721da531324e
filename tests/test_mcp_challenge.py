"""The 401 challenge comes from the configured authentication classes, and the scheme is
matched in any case (issue 36, finding 9).

The MCP endpoint challenges with the first authentication class's ``authenticate_header``
(as DRF does for the REST face): simplejwt's ``Bearer realm="api"`` under the test
settings, DRF's ``Token`` when only ``TokenAuthentication`` is configured — not always
``Bearer realm="mcp"``. RFC 9110 §11.1: the scheme is case-insensitive, so
``Authorization: token <key>`` works on REST and MCP alike (DRF's ``TokenAuthentication``
compares it lower-cased; the app parses no scheme of its own).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from tests.generic import lending_api, token_api

TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
KEY = next(iter(token_api.KEYS))


def _mcp(authorization: str | None = None) -> Any:
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    if authorization is not None:
        headers["Authorization"] = authorization
    return Client().post(
        "/mcp", data=json.dumps(TOOLS_LIST), content_type="application/json", headers=headers
    )


def _registered(urlconf: Any, **extra: Any) -> Any:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": lending_api.REGISTRATIONS,
        **extra,
    }
    return override_settings(AFFORDANCES=affordances), urlconf


@pytest.fixture
def token_project(db: None) -> Iterator[None]:
    get_user_model().objects.create_superuser("root", password="x")
    settings_override, urlconf = _registered(token_api, **token_api.SETTINGS)
    with settings_override:
        importlib.reload(urlconf)
        with override_settings(ROOT_URLCONF="tests.generic.token_api"):
            yield


@pytest.fixture
def jwt_project(db: None) -> Iterator[None]:
    settings_override, urlconf = _registered(lending_api)
    with settings_override:
        importlib.reload(urlconf)
        with override_settings(ROOT_URLCONF="tests.generic.lending_api"):
            yield


def test_the_mcp_challenge_is_the_first_configured_class(jwt_project):
    response = _mcp()
    assert response.status_code == 401
    # simplejwt's JWTAuthentication comes first in the test settings.
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    invalid = _mcp("Bearer not-a-jwt")
    assert invalid.status_code == 401
    assert invalid["WWW-Authenticate"] == 'Bearer realm="api", error="invalid_token"'


def test_token_authentication_alone_challenges_token(token_project):
    response = _mcp()
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert (
        response.json()["error"]["message"]
        == "Unauthorized: Send Authorization: Token <access token>."
    )
    invalid = _mcp("Token wrong-key")
    assert invalid.status_code == 401
    # error="invalid_token" is the bearer scheme's (RFC 6750), not Token's.
    assert invalid["WWW-Authenticate"] == "Token"
    # The REST face challenges alike.
    assert Client().get("/api/loans/")["WWW-Authenticate"] == "Token"


@pytest.mark.parametrize("scheme", ["Token", "token", "TOKEN", "tOkEn"])
def test_the_scheme_is_matched_in_any_case_on_rest_and_mcp(token_project, scheme):
    authorization = f"{scheme} {KEY}"
    assert Client().get("/api/loans/", HTTP_AUTHORIZATION=authorization).status_code == 200
    response = _mcp(authorization)
    assert response.status_code == 200, response.content
    assert "tools" in response.json()["result"]
