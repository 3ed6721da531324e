"""JSON written by orjson says what DRF's own renderer says, and falls back where orjson
refuses (affordances.encoding.fast_json, affordances.rest.renderers.JSONRenderer)."""

from __future__ import annotations

import datetime
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.utils.translation import gettext_lazy
from rest_framework import renderers
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from affordances.encoding import fast_json, jsonable
from affordances.mcp.transport.jsonrpc import dumps as mcp_dumps
from affordances.rest.renderers import JSONRenderer

UTC = datetime.UTC

VALUES: dict[str, Any] = {
    "decimal": Decimal("12.50"),
    "aware datetime": datetime.datetime(2026, 12, 4, 20, 1, 2, 345678, tzinfo=UTC),
    "naive datetime": datetime.datetime(2026, 12, 4, 20, 1, 2),
    "date": datetime.date(2026, 12, 4),
    "time with microseconds": datetime.time(20, 1, 2, 345678),
    "duration": datetime.timedelta(hours=1, seconds=1),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "lazy text": gettext_lazy("Cancel"),
    "serializer output": ReturnDict({"a": ReturnList([1, 2], serializer=None)}, serializer=None),
    "tuple": (1, "two", None, True, 1.5),
    "text beyond ASCII": "Grüße, 注文, 🚚",
    "nested": {"affordances": [{"arguments": {"orderId": 3}, "constraints": {}}]},
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_every_value_reads_back_as_drf_writes_it(name: str) -> None:
    value = VALUES[name]
    ours = JSONRenderer().render({"value": value})
    theirs = renderers.JSONRenderer().render({"value": value})
    assert ours != b"" and json.loads(ours) == json.loads(theirs)
    assert jsonable({"value": value}) == json.loads(theirs)


@pytest.mark.parametrize(
    "value",
    [
        "\ud800 a lone surrogate",  # orjson refuses text that is not UTF-8
        2**70,  # beyond 64 bits
        {1: "a key that is not text"},
    ],
)
def test_what_orjson_refuses_is_written_by_drf(value: Any) -> None:
    assert fast_json(value) is None
    data = {"value": value}
    assert JSONRenderer().render(data) == renderers.JSONRenderer().render(data)
    assert jsonable(data) == json.loads(json.dumps(data))
    # MCP messages too: ASCII-escaped, so always encodable.
    text = mcp_dumps(data)
    text.encode("utf-8")
    assert json.loads(text) == json.loads(json.dumps(data))


def test_line_separators_are_escaped_as_drf_escapes_them() -> None:
    data = {"text": "one\u2028two\u2029three"}
    rendered = JSONRenderer().render(data)
    assert b"\\u2028" in rendered and b"\\u2029" in rendered
    assert "\u2028".encode() not in rendered and json.loads(rendered) == data


def test_indented_output_and_empty_bodies_are_drf_s_own() -> None:
    data = {"a": [1, {"b": Decimal("2.0")}]}
    media_type = "application/json; indent=4"
    assert JSONRenderer().render(data, media_type) == renderers.JSONRenderer().render(
        data, media_type
    )
    assert b"\n    " in JSONRenderer().render(data, media_type)
    assert JSONRenderer().render(None) == b""


def test_compact_output_is_orjson_s() -> None:
    rendered = JSONRenderer().render({"name": "Grüße", "list": [1, 2]})
    assert rendered == '{"name":"Grüße","list":[1,2]}'.encode()


def test_what_neither_encoder_knows_fails_as_it_did() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError):
        JSONRenderer().render({"value": Opaque()})
    with pytest.raises(TypeError):
        jsonable({"value": Opaque()})
