"""The protocol's JSON Schema files (docs/protocol.md#schemas) are the library's own.

Each committed ``docs/schemas/{name}.schema.json`` must be exactly what
:func:`affordances.protocol.schema_text` generates, compared by the suites' one golden
mechanism (:mod:`tests.reference`): the generated text is written beside the reference
(``{name}.schema.out.json``, ignored by git) and the test fails on any difference or on
a missing reference. It never passes by
regenerating: update the files with ``python manage.py affordances_schemas docs/schemas``
and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from django.core.management import call_command

from affordances.protocol import SCHEMA_NAMES, protocol_schema, schema_text
from tests.reference import assert_matches_reference

SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def assert_schema(name: str) -> None:
    # The suites' one golden mechanism (tests/reference.py): as text, so key order counts.
    assert_matches_reference(protocol_schema(name), SCHEMAS / f"{name}.schema.json")


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_the_committed_schema_is_the_generated_one(name):
    assert_schema(name)


def test_every_committed_schema_is_one_the_library_publishes():
    committed = {path.name.removesuffix(".schema.json") for path in SCHEMAS.glob("*.schema.json")}
    assert committed == set(SCHEMA_NAMES)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_a_2020_12_schema_with_its_own_id(name):
    schema = protocol_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f":{name}")
    assert schema["additionalProperties"] is False


def test_compact_entries_leave_out_what_the_catalog_says():
    for kind in ("affordance-entry", "unavailable-entry"):
        full = set(protocol_schema(kind)["properties"])
        compact = set(protocol_schema(f"{kind}-compact")["properties"])
        assert compact < full
        assert not compact & {"operation", "title", "method"}


def test_the_command_writes_what_the_test_compares(tmp_path):
    call_command("affordances_schemas", str(tmp_path))
    for name in SCHEMA_NAMES:
        assert (tmp_path / f"{name}.schema.json").read_text() == schema_text(name)
    call_command("affordances_schemas", str(tmp_path), check=True)
    (tmp_path / "catalog-entry.schema.json").write_text("{}")
    with pytest.raises(Exception, match="catalog-entry"):
        call_command("affordances_schemas", str(tmp_path), check=True)


def test_an_entry_the_protocol_describes_validates_and_a_restated_compact_one_does_not():
    full = {
        "operation": "urn:helpdesk:operation:resolve-ticket:v1",
        "name": "resolve_ticket",
        "title": "Resolve ticket",
        "method": "POST",
        "target": "https://desk.example/api/tickets/12/resolve/",
        "arguments": {"ticketId": 12},
        "constraints": {"properties": {"resolution": {"enum": ["fixed"]}}},
        "validForVersion": 3,
    }
    jsonschema.validate(full, protocol_schema("affordance-entry"))
    compact = {k: v for k, v in full.items() if k not in {"operation", "title", "method"}}
    jsonschema.validate(compact, protocol_schema("affordance-entry-compact"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(full, protocol_schema("affordance-entry-compact"))
    with pytest.raises(jsonschema.ValidationError):  # an empty constraint is left out
        jsonschema.validate(
            {**compact, "constraints": {}}, protocol_schema("affordance-entry-compact")
        )
