"""The demo's own part of the adversarial review's attacks (issue 14): its bearer tokens.

The attacks on the library's faces run on the library's own models, in
tests/security/test_request_attacks.py. What stays here is the demo's deployment: its
``config.authentication`` makes every invalid simplejwt token one 401.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo
from tests.security.attacks import wire


def token_for(user: Any) -> str:
    return str(AccessToken.for_user(user))


def test_14_every_invalid_token_gets_one_401_whatever_the_account(demo: Demo) -> None:
    # Deleted, inactive, malformed or expired: the API does not say which.
    from datetime import timedelta

    users = get_user_model().objects
    gone = users.create_user("gone", password="x")
    asleep = users.create_user("asleep", password="x")
    deleted_token = token_for(gone)
    gone.delete()
    asleep_token = token_for(asleep)
    asleep.is_active = False
    asleep.save()
    expired = AccessToken.for_user(demo.users["alice"])
    expired.set_exp(lifetime=-timedelta(minutes=1))
    malformed = AccessToken.for_user(demo.users["alice"])
    malformed["user_id"] = "abc"
    answers = set()
    for credential in (deleted_token, asleep_token, str(expired), str(malformed), "x.y.z"):
        for path in ("/api/orders/", "/api/orders/1/refund/", "/api/nothing/"):
            response = Client(HTTP_AUTHORIZATION=f"Bearer {credential}").get(path)
            assert response.status_code == 401
            answers.add(wire(response))
    assert len(answers) == 1
    body = json.loads(answers.pop()[2])
    assert body["detail"] == "The credentials are invalid or expired."
