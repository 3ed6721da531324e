"""Names that mean one thing, on the demo's catalog: its stable tool names, no
``purchase_request`` in its prose, its edit URNs, ``perform(via=…)`` on an order (the
library's versions, on the test models, are in tests/test_names.py)."""

from __future__ import annotations

import re

import pytest

from affordances.catalog import get_catalog
from affordances.execution import perform


def test_the_demo_keeps_its_tool_names(db):
    names = {operation.name for operation in get_catalog()}
    assert {"list_orders", "get_order", "list_purchase_requests"} <= names


def test_no_identifier_in_the_prose_people_and_models_read(db):
    for operation in get_catalog():
        assert "_" not in operation.title, operation.title
        # Backticks quote code (permission names, arguments); the rest is prose.
        prose = re.sub(r"`[^`]*`", "", operation.description)
        assert "purchase_request" not in prose, (operation.name, prose)
        for schema in operation.input_schema.get("properties", {}).values():
            assert "purchase_request" not in schema.get("description", ""), operation.name


def test_the_edit_urn_is_spelled_like_operation_urns(db):
    for resource in get_catalog().resources:
        slug = resource.edit_name.replace("_", "-")
        assert resource.edit_urn == f"urn:example:operation:{slug}:v1"


def test_perform_takes_a_faces_own_short_name_and_refuses_malformed_ones(demo):
    operation = get_catalog().lookup("confirm_order")
    order = demo.orders["demo-01"]
    user = demo.users["support"]
    run = {"operation": operation, "pk": order.pk, "user": user, "arguments": {}}
    represent = lambda instance: {"id": instance.pk}  # noqa: E731
    outcome = perform(**run, via="graphql", represent=represent)
    assert outcome.status == 200
    from affordances.models import AuditRecord

    assert AuditRecord.objects.filter(via="graphql").count() == 1
    for via in ("GraphQL", "a face name too long", "", None, "x\x00"):
        with pytest.raises(ValueError, match="via must be"):
            perform(**run, via=via, represent=represent)


def test_the_demo_settings_pass_every_check():
    from affordances.checks import check_settings

    assert check_settings() == []
