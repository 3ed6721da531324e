"""System checks: what the catalog cannot serve is reported at startup (affordances.E/W…)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from django.conf import settings as django_settings
from django.core import checks
from django.db import models
from django.test import override_settings
from django.test.utils import isolate_apps
from django_fsm import FSMField, transition

import affordances.catalog
from affordances import operation
from affordances.catalog import Catalog, get_catalog
from affordances.checks import check_catalog
from affordances.conf import ModelOptions
from affordances.operations import Operation, build_operations
from affordances.resources import Resource
from affordances.schemas import SchemaError


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [message.id for message in messages]


def _with_models(models_setting: dict) -> override_settings:
    return override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models_setting})


def _serve(monkeypatch: pytest.MonkeyPatch, operations: list[Operation]) -> None:
    """Make check_catalog see a catalog made of these operations."""
    built = get_catalog()
    catalog = Catalog(operations=tuple(operations), resources=built.resources)
    monkeypatch.setattr(affordances.catalog, "build_catalog", lambda: catalog)


def _replacing(which: str, **changes: object) -> list[Operation]:
    """The demo operations with one of them changed."""
    return [dataclasses.replace(op, **changes) if op.name == which else op for op in get_catalog()]


# --- the demo ------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_checks_have_no_side_effects():
    # They read a catalog built for them; the process's catalog and memo stay as they were.
    from affordances import memo

    catalog = get_catalog()
    memo.memoized(("probe",), lambda: b"kept", size=len)
    assert checks.run_checks(tags=None) is not None
    assert get_catalog() is catalog
    assert ("probe",) in memo.DOCUMENTS


def test_demo_catalog_passes_the_affordances_check():
    assert check_catalog() == []


# Django 6.1 runs the model checks against every database (run_checks(databases=None)
# means all of them, as `manage.py check` does); on SQLite a JSONField's check asks it.
@pytest.mark.django_db
def test_demo_project_has_no_affordances_messages_among_all_system_checks():
    messages = checks.run_checks()

    assert [m for m in messages if (m.id or "").startswith("affordances.")] == []


@pytest.mark.django_db
def test_the_check_is_registered_with_django():
    with _with_models({"nope.Nope": {}}):
        messages = checks.run_checks()

    assert "affordances.E001" in _ids(messages)


# --- configuration errors ------------------------------------------------------------


def test_a_model_that_is_not_installed_is_e001():
    with _with_models({"nope.Nope": {}}):
        messages = check_catalog()

    assert _ids(messages) == ["affordances.E001"]
    assert "nope.Nope" in messages[0].msg
    assert isinstance(messages[0], checks.Error)


def test_a_model_without_an_fsm_field_is_e002():
    # VERSION_FIELD "id" exists on User, so only the missing FSMField is reported.
    with _with_models({"auth.User": {"VERSION_FIELD": "id"}}):
        messages = check_catalog()

    assert _ids(messages) == ["affordances.E002"]
    assert "auth.User" in messages[0].msg


def test_a_model_without_fsm_field_nor_version_reports_both():
    with _with_models({"auth.User": {}}):
        messages = check_catalog()

    assert _ids(messages) == ["affordances.E002", "affordances.E003"]


def test_a_missing_version_field_is_e003():
    with _with_models(
        {**django_settings.AFFORDANCES["MODELS"], "generic.Ticket": {"VERSION_FIELD": "missing"}}
    ):
        messages = check_catalog()

    assert _ids(messages) == ["affordances.E003"]
    assert "generic.Ticket" in messages[0].msg
    assert "missing" in messages[0].msg


def test_registering_the_generic_ticket_passes_the_check():
    with _with_models({**django_settings.AFFORDANCES["MODELS"], "generic.Ticket": {}}):
        assert check_catalog() == []


def test_an_input_serializer_that_cannot_be_a_schema_is_e004(monkeypatch):
    def broken() -> Catalog:
        raise SchemaError("BrokenInput: cannot map field")

    monkeypatch.setattr(affordances.catalog, "build_catalog", broken)

    messages = check_catalog()

    assert _ids(messages) == ["affordances.E004"]
    assert "BrokenInput" in messages[0].msg


# --- operations ------------------------------------------------------------------------


def test_two_operations_with_one_name_are_e005(monkeypatch):
    _serve(monkeypatch, _replacing("ship_order", name="confirm_order"))

    messages = check_catalog()

    assert _ids(messages) == ["affordances.E005"]
    assert "'confirm_order'" in messages[0].msg
    assert messages[0].hint


def test_a_transition_without_description_is_e006(monkeypatch):
    _serve(monkeypatch, _replacing("cancel_order", description=""))

    messages = check_catalog()

    assert _ids(messages) == ["affordances.E006"]
    assert "Order.cancel" in messages[0].msg


def test_a_thin_description_is_w001(monkeypatch):
    _serve(monkeypatch, _replacing("refund_order", description="Refund it."))

    messages = check_catalog()

    assert _ids(messages) == ["affordances.W001"]
    assert isinstance(messages[0], checks.Warning)
    assert "Order.refund" in messages[0].msg


def test_a_forty_character_description_is_enough(monkeypatch):
    _serve(monkeypatch, _replacing("refund_order", description="x" * 40))

    assert check_catalog() == []


def test_reads_are_not_held_to_the_docstring_rules(monkeypatch):
    _serve(monkeypatch, _replacing("get_order", description=""))

    assert check_catalog() == []


def test_an_operation_with_an_empty_title_is_w002(monkeypatch):
    cancel = get_catalog().lookup("cancel_order")
    assert cancel is not None and cancel.spec is not None
    _serve(monkeypatch, _replacing("cancel_order", spec=dataclasses.replace(cancel.spec, title="")))

    messages = check_catalog()

    assert _ids(messages) == ["affordances.W002"]
    assert "Order.cancel" in messages[0].msg


# --- from a model, through the real introspection ------------------------------------


def _operations_of(model: type[models.Model]) -> list[Operation]:
    options = ModelOptions(
        label=f"generic.{model.__name__}",
        serializer=None,
        queryset=None,
        basename=None,
        resource=None,
        version_field="version",
        filterset=None,
    )
    return build_operations(Resource(model=model, options=options))


def _widget(define: Callable[[], type[models.Model]]) -> list[Operation]:
    with isolate_apps("tests.generic"):
        return _operations_of(define())


def test_a_transition_method_without_docstring_is_e006(monkeypatch):
    def define() -> type[models.Model]:
        class Widget(models.Model):
            state = FSMField(default="new")
            version = models.PositiveIntegerField(default=1)

            class Meta:
                app_label = "generic"

            def __str__(self) -> str:
                return f"Widget #{self.pk}"

            @operation(title="Poke widget")
            @transition(field=state, source="new", target="poked")
            def poke(self) -> None:
                pass

        return Widget

    _serve(monkeypatch, [*get_catalog(), *_widget(define)])

    messages = check_catalog()

    assert _ids(messages) == ["affordances.E006"]
    assert "Widget.poke" in messages[0].msg


def test_a_transition_without_operation_declaration_is_w002(monkeypatch):
    def define() -> type[models.Model]:
        class Widget(models.Model):
            state = FSMField(default="new")
            version = models.PositiveIntegerField(default=1)

            class Meta:
                app_label = "generic"

            def __str__(self) -> str:
                return f"Widget #{self.pk}"

            @transition(field=state, source="new", target="poked")
            def poke(self) -> None:
                """Poke a new widget so that it reacts; a poked widget stays poked."""

        return Widget

    _serve(monkeypatch, [*get_catalog(), *_widget(define)])

    messages = check_catalog()

    # The check's own message: "Transition Widget.poke has no @operation(title=...)".
    assert _ids(messages) == ["affordances.W002"]
    assert "Widget.poke" in messages[0].msg


# --- silent misconfigurations ----------------------------------------------------------


def test_the_demo_has_no_rest_face_messages():
    from affordances.rest.checks import check_rest_face

    assert check_rest_face() == []


def test_a_constraint_that_widens_whatever_it_gets_is_e007(monkeypatch):
    widening = _replacing(
        "cancel_order",
        spec=dataclasses.replace(
            get_catalog().lookup("cancel_order").spec,
            constraints=lambda order, user: {"properties": {"reason": {"enum": ["bogus"]}}},
        ),
    )
    _serve(monkeypatch, widening)

    messages = check_catalog()

    assert _ids(messages) == ["affordances.E007"]
    assert "cancel_order" in messages[0].msg


def test_a_constraint_the_probe_cannot_evaluate_is_left_to_request_time(monkeypatch):
    def needs_a_real_order(order, user):
        return {"properties": {"amount": {"maximum": order.customer.pk}}}

    _serve(
        monkeypatch,
        _replacing(
            "refund_order",
            spec=dataclasses.replace(
                get_catalog().lookup("refund_order").spec, constraints=needs_a_real_order
            ),
        ),
    )
    assert check_catalog() == []


def test_a_serializer_without_url_is_w003():
    from rest_framework import serializers

    from orders.models import Order

    class Bare(serializers.ModelSerializer):
        class Meta:
            model = Order
            fields = ["id", "status", "version"]

    import orders.serializers

    orders.serializers.BareOrderSerializer = Bare  # type: ignore[attr-defined]
    try:
        registration = {
            **django_settings.AFFORDANCES["MODELS"]["orders.Order"],
            "SERIALIZER": "orders.serializers.BareOrderSerializer",
        }
        with _with_models({"orders.Order": registration}):
            assert _ids(check_catalog()) == ["affordances.W003"]
    finally:
        del orders.serializers.BareOrderSerializer  # type: ignore[attr-defined]


def test_routes_under_another_basename_are_w004():
    from affordances.rest.checks import check_rest_face

    registration = {**django_settings.AFFORDANCES["MODELS"]["orders.Order"], "BASENAME": "shop"}
    with _with_models({"orders.Order": registration}):
        messages = check_rest_face()
    assert _ids(messages) == ["affordances.W004"]
    assert "shop-detail" in messages[0].msg and "shop-cancel" in messages[0].msg


def test_no_hal_forms_renderer_is_w005():
    from affordances.rest.checks import check_rest_face

    rest = {
        **django_settings.REST_FRAMEWORK,
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    }
    with override_settings(REST_FRAMEWORK=rest):
        assert _ids(check_rest_face()) == ["affordances.W005", "affordances.W007"]


def test_no_plain_hal_renderer_is_w007():
    from affordances.rest.checks import check_rest_face

    renderers = [
        name
        for name in django_settings.REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"]
        if not name.endswith(".HalRenderer")
    ]
    rest = {**django_settings.REST_FRAMEWORK, "DEFAULT_RENDERER_CLASSES": renderers}
    with override_settings(REST_FRAMEWORK=rest):
        messages = check_rest_face()
    assert _ids(messages) == ["affordances.W007"]
    assert "application/hal+json" in messages[0].msg


def test_drf_spectacular_without_its_schema_class_is_w006():
    from affordances.rest.checks import check_rest_face

    rest = {
        key: value
        for key, value in django_settings.REST_FRAMEWORK.items()
        if key != "DEFAULT_SCHEMA_CLASS"
    }
    with override_settings(REST_FRAMEWORK=rest):
        assert _ids(check_rest_face()) == ["affordances.W006"]
