"""The demo's bearer scheme is matched in any case (issue 36, finding 9; RFC 9110 §11.1).

simplejwt compares the scheme byte for byte, so ``Authorization: bearer <token>`` was a
missing credential (401) on REST and MCP; the demo's ``config.authentication``
``JWTAuthentication`` reads ``bearer``, ``BEARER`` and ``Bearer`` alike. Unknown schemes
are still no credential.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo

TOOLS_LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})


def _mcp(authorization: str) -> object:
    return Client().post(
        "/mcp",
        data=TOOLS_LIST,
        content_type="application/json",
        headers={
            "Accept": "application/json",
            "Authorization": authorization,
            "MCP-Protocol-Version": "2025-11-25",
        },
    )


@pytest.mark.django_db
@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_matched_in_any_case(demo: Demo, scheme: str) -> None:
    authorization = f"{scheme} {AccessToken.for_user(demo.users['support'])}"
    assert Client().get("/api/orders/", HTTP_AUTHORIZATION=authorization).status_code == 200
    response = _mcp(authorization)
    assert response.status_code == 200, response.content


@pytest.mark.django_db
def test_another_scheme_is_no_credential(demo: Demo) -> None:
    authorization = f"Basic {AccessToken.for_user(demo.users['support'])}"
    assert Client().get("/api/orders/", HTTP_AUTHORIZATION=authorization).status_code == 401
    assert _mcp(authorization).status_code == 401
