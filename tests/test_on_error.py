"""django-fsm's ``on_error=`` is refused by a system check (issue 36, finding 11).

Every face runs a transition in one transaction and rolls it back whole when the body
raises, so the ``on_error`` state django-fsm sets in memory was never kept — silently.
``affordances.E027`` names each transition that declares it.
"""

from __future__ import annotations

from django.conf import settings as django_settings
from django.test import override_settings

from affordances.checks import check_catalog
from tests.generic import lending_api


def _ids(models: dict[str, dict[str, str]]) -> list[str]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": models}
    with override_settings(AFFORDANCES=affordances):
        return [message.id for message in check_catalog()]


def test_a_transition_with_on_error_is_a_system_check_error():
    models = {"generic.Hold": lending_api.HOLD_REGISTRATION}
    affordances = {**django_settings.AFFORDANCES, "MODELS": models}
    with override_settings(AFFORDANCES=affordances):
        messages = check_catalog()
    # Nothing else of the registration is wrong: this is the one refusal.
    assert [m.id for m in messages] == ["affordances.E027"]
    (message,) = messages
    assert message.is_serious()
    assert "Hold.collect" in message.msg
    assert "'failed'" in message.msg


def test_transitions_without_on_error_pass(db):
    assert "affordances.E027" not in _ids(lending_api.REGISTRATIONS)
