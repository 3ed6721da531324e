"""The audit record's copy of who acted fits its column, whatever the user model's
``USERNAME_FIELD`` allows: an e-mail login takes up to 254 characters, and a longer
name than the column's 150 failed every run on PostgreSQL (and was kept whole on
SQLite). The record's user is the user either way."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.models import AuditRecord
from tests.generic import payouts_api
from tests.generic.payouts import Payout


@pytest.fixture
def payouts(db: None) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Payout": payouts_api.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(payouts_api)
        yield


@pytest.mark.parametrize("length", [150, 200])
def test_a_username_longer_than_the_column_is_cut_to_it(payouts: None, length: int) -> None:
    user = get_user_model().objects.create_superuser("root", password="x")
    # As a user model whose USERNAME_FIELD is longer than auth.User's (an e-mail address):
    # the name is what get_username() answers, never saved in auth.User's own column.
    name = user.username = "a" * length
    payout = Payout.objects.create(assignee="clerk")
    operation = get_catalog().lookup("hold_payout")
    assert operation is not None
    perform(
        operation=operation,
        pk=payout.pk,
        user=user,
        arguments={},
        via="api",
        represent=lambda instance: {"id": instance.pk},
    )
    (record,) = AuditRecord.objects.filter(object_id=str(payout.pk))
    assert record.username == name[:150]
    assert record.user_id == user.pk
