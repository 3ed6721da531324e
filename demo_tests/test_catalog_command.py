"""``manage.py affordances_catalog [--user NAME] [--indent N]``: the catalog as JSON."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tests.reference import assert_matches_reference

GOLDEN = Path(__file__).parent / "golden" / "catalog.json"
GOLDEN_PROCUREMENT = Path(__file__).parent / "golden" / "catalog_procurement.json"
ALL_OPERATIONS = [
    "get_order",
    "list_orders",
    "create_order",
    "confirm_order",
    "ship_order",
    "deliver_order",
    "cancel_order",
    "refund_order",
]


def _run(*args: str) -> str:
    out = StringIO()
    call_command("affordances_catalog", *args, stdout=out)
    return out.getvalue()


def _names(document: dict[str, Any], resource: str = "order") -> list[str]:
    return [entry["name"] for entry in document["operations"] if entry["resource"] == resource]


def test_command_prints_the_whole_catalog_as_json():
    document = json.loads(_run())

    assert list(document) == ["operations"]
    assert _names(document) == ALL_OPERATIONS
    assert len(_names(document, "purchase_request")) == 19
    assert len(document["operations"]) == 8 + 19


def test_command_output_per_resource_is_its_golden_catalog():
    assert_matches_reference(json.loads(_run("--resource", "order")), GOLDEN)
    assert_matches_reference(json.loads(_run("--resource", "purchase_request")), GOLDEN_PROCUREMENT)


def test_command_for_an_unknown_resource_is_a_command_error():
    with pytest.raises(CommandError, match="invoice"):
        _run("--resource", "invoice")


def test_command_output_is_the_same_on_every_run():
    assert _run() == _run()


def test_command_indent_only_changes_the_layout():
    compact = _run("--indent", "0")
    default = _run()

    assert json.loads(compact) == json.loads(default)
    assert compact != default


def test_command_for_alice_prints_only_her_operations(demo):
    document = json.loads(_run("--user", "alice"))

    assert _names(document) == ["get_order", "list_orders", "create_order", "cancel_order"]
    # Every registered resource's reads, scoped by its QUERYSET (none of hers here).
    assert _names(document, "purchase_request") == [
        "get_purchase_request",
        "list_purchase_requests",
    ]


def test_command_for_alice_prints_the_entries_of_the_whole_catalog(demo):
    whole = {entry["name"]: entry for entry in json.loads(_run())["operations"]}

    for entry in json.loads(_run("--user", "alice"))["operations"]:
        assert entry == whole[entry["name"]]


def test_command_for_the_admin_prints_everything(demo):
    assert json.loads(_run("--user", "admin")) == json.loads(_run())


def test_command_for_an_unknown_user_is_a_command_error(demo):
    with pytest.raises(CommandError, match="nobody"):
        _run("--user", "nobody")
