"""Dates and date-times in the constraint vocabulary; constraint functions checked where
they can be (issue 52, item 5).

A constraint bounds a date or a date-time input with ``formatMinimum``/``formatMaximum``
(inclusive; ``YYYY-MM-DD``, RFC 3339): narrowed per object, the tighter bound winning,
enforced at execution on every face (a value outside is a ``validation_error`` naming
the argument), shown as ``min``/``max`` in HAL-FORMS, the admin's and browsable API's
date inputs and OPTIONS. A malformed bound, or one looser than the input's own, widens:
refused as every widening constraint is. The system check probes a constraint function
on a sample when a fresh object cannot feed it, and warns (``affordances.W014``) when it
still cannot; ``affordances.testing.assert_constraints`` checks one on a project's own
objects.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.checks import _check_constraints
from affordances.constraints import (
    ConstraintNotShown,
    ConstraintWidens,
    assert_narrows,
    input_kind,
    narrow_property,
)
from affordances.evaluation import Unavailable, evaluate
from affordances.rest.openapi_bodies import from_openapi, openapi_dialect
from affordances.samples import sample_instance
from affordances.testing import assert_constraints
from tests.generic import bookings_api
from tests.generic.bookings import Booking
from tests.hal_forms_spec import hal_forms_violations
from tests.mcp_wire import Wire

HAL_FORMS = "application/prs.hal-forms+json"
OPERATION = "reschedule_booking"

BASE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "day": {"type": "string", "format": "date"},
        "at": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]},
        "until": {"type": "string", "format": "date", "formatMaximum": "2030-12-31"},
        "note": {"type": "string"},
    },
}


# --- the vocabulary ----------------------------------------------------------------------


def test_dates_and_date_times_are_kinds_of_input():
    properties = BASE["properties"]
    assert input_kind(properties["day"]) == "date"
    assert input_kind(properties["at"]) == "date-time"
    assert input_kind({"type": "string", "format": "time"}) == "other"


@pytest.mark.parametrize(
    "narrowed",
    [
        {"day": {"formatMinimum": "2025-03-01", "formatMaximum": "2025-03-31"}},
        {"at": {"formatMinimum": "2025-03-01T09:00:00Z"}},
        {"at": {"formatMaximum": "2025-03-01T09:00:00.5+02:00"}},
        {"until": {"formatMaximum": "2030-12-31"}},
        {"day": {"enum": ["2025-03-02"]}},
    ],
    ids=str,
)
def test_a_date_bound_narrows(narrowed):
    assert_narrows(BASE, {"properties": narrowed})


@pytest.mark.parametrize(
    "narrowed",
    [
        {"day": {"formatMinimum": "2025-3-1"}},
        {"day": {"formatMinimum": "2025-02-30"}},
        {"day": {"formatMaximum": 20250301}},
        {"day": {"formatMinimum": "2025-03-01T09:00:00Z"}},
        {"at": {"formatMinimum": "2025-03-01"}},
        {"at": {"formatMinimum": "2025-03-01T09:00:00"}},  # no offset: not RFC 3339
        {"until": {"formatMaximum": "2031-01-01"}},  # looser than the input's own
    ],
    ids=str,
)
def test_a_malformed_or_looser_date_bound_widens(narrowed):
    with pytest.raises(ConstraintWidens) as raised:
        assert_narrows(BASE, {"properties": narrowed})
    assert not isinstance(raised.value, ConstraintNotShown)


@pytest.mark.parametrize(
    "narrowed",
    [
        {"day": {"minimum": 1}},
        {"day": {"maxLength": 10}},
        {"note": {"formatMinimum": "2025-03-01"}},
    ],
    ids=str,
)
def test_a_bound_no_face_shows_on_the_input_is_refused(narrowed):
    with pytest.raises(ConstraintNotShown):
        assert_narrows(BASE, {"properties": narrowed})


def test_the_tighter_date_bound_wins_when_merged():
    until = narrow_property(
        BASE["properties"]["until"],
        {"formatMinimum": "2025-01-01", "formatMaximum": "2026-01-01"},
    )
    assert (until["formatMinimum"], until["formatMaximum"]) == ("2025-01-01", "2026-01-01")
    kept = narrow_property(BASE["properties"]["until"], {"formatMaximum": "2030-12-31"})
    assert kept["formatMaximum"] == "2030-12-31"
    at = narrow_property(BASE["properties"]["at"], {"formatMinimum": "2025-03-01T09:00:00Z"})
    assert at["anyOf"][0]["formatMinimum"] == "2025-03-01T09:00:00Z"
    # OpenAPI 3.0 takes no unknown keyword: written as extensions, read back.
    written = openapi_dialect(until)
    assert written["x-formatMaximum"] == "2026-01-01" and "formatMaximum" not in written
    assert from_openapi(written)["formatMaximum"] == "2026-01-01"


# --- the booking project -------------------------------------------------------------------


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Booking": bookings_api.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(bookings_api)
        with override_settings(ROOT_URLCONF="tests.generic.bookings_api"):
            yield


@pytest.fixture
def root(project: None) -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


@pytest.fixture
def api(root: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(root)
    return client


def _booking(**fields: Any) -> Booking:
    return Booking.objects.create(**{"fee": Decimal("10.00"), **fields})


def _target(booking: Booking) -> str:
    return f"/api/bookings/{booking.pk}/reschedule/"


def test_the_bounds_are_narrowed_per_object(api):
    march = _booking()
    april = _booking(opens="2025-04-01", closes="2025-04-30")
    for booking, window in (
        (march, ("2025-03-01", "2025-03-31")),
        (april, ("2025-04-01", "2025-04-30")),
    ):
        (entry,) = api.get(f"/api/bookings/{booking.pk}/").json()["affordances"]
        day = entry["constraints"]["properties"]["day"]
        assert (day["formatMinimum"], day["formatMaximum"]) == window


@pytest.mark.parametrize(
    ("day", "ok"),
    [("2025-02-28", False), ("2025-03-01", True), ("2025-03-31", True), ("2025-04-01", False)],
)
def test_rest_enforces_the_date_bounds(api, day, ok):
    response = api.post(_target(_booking()), {"day": day}, format="json")
    if ok:
        assert response.status_code == 200, response.content
        return
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    word = "after 2025-03-01" if day < "2025-03" else "before 2025-03-31"
    assert body["errors"] == {"day": [f"Must be on or {word}."]}


def test_rest_enforces_a_date_time_bound_in_any_offset(api):
    booking = _booking()
    early = api.post(_target(booking), {"day": "2025-03-02", "at": "2025-03-01T10:59:59+02:00"})
    assert early.status_code == 400
    assert early.json()["errors"] == {"at": ["Must be on or after 2025-03-01T09:00:00Z."]}
    on_time = api.post(
        _target(booking), {"day": "2025-03-02", "at": "2025-03-01T11:00:00+02:00"}, format="json"
    )
    assert on_time.status_code == 200, on_time.content


def test_mcp_enforces_the_date_bounds(root):
    wire = Wire(str(AccessToken.for_user(root)))
    booking = _booking()
    refused = wire.tool(OPERATION, {"bookingId": booking.pk, "day": "2025-04-01"})
    assert refused["isError"]
    content = refused["structuredContent"]
    assert content["code"] == "validation_error"
    assert content["errors"] == {"day": ["Must be on or before 2025-03-31."]}
    taken = wire.tool(OPERATION, {"bookingId": booking.pk, "day": "2025-03-31"})
    assert not taken["isError"], taken
    assert str(Booking.objects.get(pk=booking.pk).day) == "2025-03-31"


def test_hal_forms_shows_the_bounds_as_min_and_max(api):
    document = api.get(f"/api/bookings/{_booking().pk}/", HTTP_ACCEPT=HAL_FORMS).json()
    assert hal_forms_violations(document) == []
    properties = {p["name"]: p for p in document["_templates"][OPERATION]["properties"]}
    day, at = properties["day"], properties["at"]
    assert (day["type"], day["min"], day["max"]) == ("date", "2025-03-01", "2025-03-31")
    # A datetime-local input: the bound in the current time zone (UTC), no offset.
    assert (at["type"], at["min"]) == ("datetime-local", "2025-03-01T09:00:00")
    assert "max" not in at


def test_the_admin_form_shows_the_bounds_as_min_and_max(root):
    client = Client()
    client.force_login(root)
    booking = _booking(opens="2025-04-01", closes="2025-04-30")
    response = client.get(f"/bookings-admin/generic/booking/{booking.pk}/operation/{OPERATION}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'type="date"' in html
    assert 'min="2025-04-01"' in html and 'max="2025-04-30"' in html
    # The date-time input too, its bound in the current time zone (UTC) without offset.
    assert 'type="datetime-local"' in html
    assert 'min="2025-04-01T09:00:00"' in html


def test_options_and_the_browsable_api_show_the_bounds(api):
    booking = _booking()
    fields = api.options(_target(booking)).json()["actions"]["POST"]
    assert (fields["day"]["min_value"], fields["day"]["max_value"]) == ("2025-03-01", "2025-03-31")
    response = api.get(f"/api/bookings/{booking.pk}/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    (form,) = response.context["affordance_forms"]
    html = str(form["form"])
    assert 'min="2025-03-01"' in html and 'max="2025-03-31"' in html


def _with_constraint(rule: Any) -> Any:
    found = get_catalog().lookup(OPERATION)
    return dataclasses.replace(found, spec=dataclasses.replace(found.spec, constraints=rule))


def test_a_widening_date_bound_makes_the_operation_unavailable(root):
    widening = _with_constraint(
        lambda booking, user: {"properties": {"day": {"formatMaximum": "soon"}}}
    )
    refused = evaluate(widening, _booking(), root)
    assert isinstance(refused, Unavailable) and refused.reason == "misconfigured"


# --- the system check's probe ---------------------------------------------------------------


def test_the_probe_feeds_a_function_a_sample_of_the_required_fields(project):
    booking = sample_instance(Booking)
    assert booking.pk is None and booking.fee == Decimal(1)
    # booking_window reads booking.fee: None on a fresh Booking(), 1 on the sample.
    assert _check_constraints([get_catalog().lookup(OPERATION)]) == []


def test_the_probe_checks_what_it_could_not_before(project):
    # The issue's case: a function reading a field, with a keyword no face shows on a date.
    def unshown(booking: Any, user: Any) -> dict[str, Any]:
        return {"properties": {"day": {"minimum": int(booking.fee * 2)}}}

    (message,) = _check_constraints([_with_constraint(unshown)])
    assert message.id == "affordances.E026"
    assert OPERATION in message.msg and "day.minimum" in message.msg


def test_a_function_the_probe_cannot_evaluate_is_a_warning(project):
    def tenant_bound(booking: Any, user: Any) -> dict[str, Any]:
        return {"properties": {"day": {"formatMinimum": user.tenant.opens}}}

    (message,) = _check_constraints([_with_constraint(tenant_bound)])
    assert message.id == "affordances.W014"
    assert OPERATION in message.msg
    assert "AttributeError" in message.msg and "tenant" in message.msg


def test_a_widening_only_on_a_generated_sample_is_a_warning_on_the_projects_own_an_error(
    project, monkeypatch
):
    def negative(booking: Any, user: Any) -> dict[str, Any]:
        return {"properties": {"day": {"formatMinimum": f"{2025 - int(booking.fee)}-3-1"}}}

    (message,) = _check_constraints([_with_constraint(negative)])
    assert message.id == "affordances.W014" and "generated sample" in message.msg

    monkeypatch.setattr(
        Booking, "affordances_sample", classmethod(lambda cls: cls(fee=Decimal(5))), raising=False
    )
    (message,) = _check_constraints([_with_constraint(negative)])
    assert message.id == "affordances.E007" and "day.formatMinimum" in message.msg


# --- the test helper -------------------------------------------------------------------------


def test_assert_constraints_checks_a_function_on_the_projects_own_objects(root):
    constraints = assert_constraints(OPERATION, _booking(), root)
    assert constraints["properties"]["day"]["formatMaximum"] == "2025-03-31"
    with pytest.raises(AssertionError, match=r"day\.formatMinimum"):
        assert_constraints(OPERATION, _booking(fee=Decimal("-1.00")), root)
    with pytest.raises(AssertionError, match="No operation"):
        assert_constraints("no_such_operation", None, root)
