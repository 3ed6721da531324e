"""Idempotency claims (docs/protocol.md#execution): the key rule, the bound after which a
``running`` claim is
abandoned (``REQUEST_TIMEOUT + LOCK_TIMEOUT``), its check (``affordances.E018``), and a
run that outlived the bound: it rolls back instead of completing a claim taken over.

The attacks these answer, over the whole HTTP stack, are in
``tests/security/test_idempotency_attacks.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core import checks
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from affordances import execution, idempotency
from affordances.checks import check_settings
from affordances.conf import MAX_SECONDS, settings
from affordances.models import AuditRecord, IdempotencyRecord
from affordances.problems import Problem
from tests.generic.shop import Purchase
from tests.security.test_idempotency_attacks import confirm, dead_claim
from tests.shop_data import Shop


def _affordances(**values: Any) -> override_settings:
    return override_settings(AFFORDANCES={**django_settings.AFFORDANCES, **values})


# --- the key ---------------------------------------------------------------------------


def test_every_visible_ascii_key_up_to_255_characters_is_a_key() -> None:
    assert idempotency.parse_key(None) is None
    for code in range(0x21, 0x7F):
        assert idempotency.parse_key(chr(code)) == chr(code)
    assert idempotency.parse_key("k" * 255) == "k" * 255


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        "k" * 256,
        "k\x00",
        "\x1f",
        "\x7f",
        "\x80",
        "\xa0",
        "é",
        "\u2028",
        "k\ud800",
        7,
        b"k",
    ],
)
def test_anything_else_is_malformed(value: Any) -> None:
    with pytest.raises(Problem) as raised:
        idempotency.parse_key(value)

    assert raised.value.status == 400
    assert raised.value.code == "malformed_request"


def test_claim_checks_the_key_itself(shop: Shop) -> None:
    with pytest.raises(Problem):
        idempotency.claim(user=shop.users["support"], key="k\x00", print_="0" * 64)

    assert not IdempotencyRecord.objects.exists()


# --- the bound -------------------------------------------------------------------------


def test_the_bound_is_request_timeout_plus_lock_timeout() -> None:
    assert settings.claim_stale_after == 35
    with _affordances(REQUEST_TIMEOUT=120, LOCK_TIMEOUT=None):
        assert settings.claim_stale_after == 120
    with _affordances(REQUEST_TIMEOUT=None):
        assert settings.claim_stale_after is None


def test_a_claim_is_taken_over_only_past_the_bound(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead_claim(shop.users["support"], "k-slow", pk, age=timedelta(minutes=5))
    client = shop_api("support")

    with _affordances(REQUEST_TIMEOUT=600):
        young = confirm(client, pk, "k-slow")
    taken = confirm(client, pk, "k-slow")

    assert young.status_code == 409
    assert taken.status_code == 200
    assert Purchase.objects.get(pk=pk).version == 2


def test_without_a_request_timeout_a_claim_is_held_until_it_expires(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead_claim(shop.users["support"], "k-held", pk, age=timedelta(hours=23))

    with _affordances(REQUEST_TIMEOUT=None):
        response = confirm(shop_api("support"), pk, "k-held")

    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_use"


def test_a_run_whose_claim_was_taken_over_rolls_back(
    shop: Shop, shop_api: Callable[[str], APIClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run that outlived the bound (no request timeout after all): a retry took its
    # claim over (committed, on its own connection) while it ran. It must not complete
    # the retry's claim, nor release it, nor run the operation as well.
    pk = shop.purchases["p-01"].pk
    claim = execution._claim
    taken_at = timezone.now() + timedelta(seconds=1)

    def taken_over_meanwhile(**kwargs: Any) -> Any:
        claimed = claim(**kwargs)
        IdempotencyRecord.objects.filter(key="k-late").update(claimed_at=taken_at)
        return claimed

    monkeypatch.setattr(execution, "_claim", taken_over_meanwhile)
    response = confirm(shop_api("support"), pk, "k-late")

    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_use"
    purchase = Purchase.objects.get(pk=pk)
    assert (purchase.status, purchase.version) == ("pending", 1)
    assert not AuditRecord.objects.exists()
    # The retry's claim is left as the retry made it: neither completed nor released.
    record = IdempotencyRecord.objects.get(key="k-late")
    assert (record.state, record.claimed_at) == (IdempotencyRecord.RUNNING, taken_at)


def test_a_refusal_releases_only_its_own_claim(shop: Shop) -> None:
    user = shop.users["support"]
    mine = idempotency.claim(user=user, key="k-own", print_="0" * 64).record
    IdempotencyRecord.objects.filter(pk=mine.pk).update(claimed_at=timezone.now())

    idempotency.release(mine)

    assert IdempotencyRecord.objects.filter(pk=mine.pk).exists()


# --- the check -------------------------------------------------------------------------


def test_the_demo_timeouts_pass_the_check() -> None:
    assert check_settings() == []
    with _affordances(REQUEST_TIMEOUT=None, LOCK_TIMEOUT=None):
        assert check_settings() == []
    with _affordances(REQUEST_TIMEOUT=0.5, LOCK_TIMEOUT=MAX_SECONDS):
        assert check_settings() == []


@pytest.mark.parametrize("name", ["REQUEST_TIMEOUT", "LOCK_TIMEOUT"])
@pytest.mark.parametrize(
    "value", [0, -1, "30", True, float("inf"), float("nan"), MAX_SECONDS + 1, 1e300]
)
def test_a_malformed_timeout_is_e018(name: str, value: Any) -> None:
    with _affordances(**{name: value}):
        messages = check_settings()

    assert [m.id for m in messages] == ["affordances.E018"]
    assert isinstance(messages[0], checks.Error)
    assert name in messages[0].msg


# Django 6.1 runs the model checks against every database; on SQLite a JSONField's asks it.
@pytest.mark.django_db
def test_the_timeout_check_is_registered_with_django() -> None:
    with _affordances(REQUEST_TIMEOUT="30s"):
        messages = checks.run_checks()

    assert "affordances.E018" in [m.id for m in messages]


def test_an_unknown_setting_is_left_to_e001() -> None:
    with _affordances(REQUEST_TIMEOT=30):
        assert check_settings() == []
