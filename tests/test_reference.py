"""The one golden mechanism (tests/reference.py) never passes by writing its reference."""

from __future__ import annotations

import json

import pytest

from tests.reference import assert_matches_reference, output_path


def test_a_missing_reference_fails_and_is_not_written(tmp_path):
    reference = tmp_path / "thing.json"
    with pytest.raises(pytest.fail.Exception, match="is missing"):
        assert_matches_reference({"a": 1}, reference)
    assert not reference.exists()
    assert json.loads(output_path(reference).read_text()) == {"a": 1}


def test_a_difference_fails_and_leaves_the_reference_as_it_was(tmp_path):
    reference = tmp_path / "thing.json"
    reference.write_text('{"a": 1}\n')
    with pytest.raises(pytest.fail.Exception, match="differs"):
        assert_matches_reference({"a": 2}, reference)
    assert reference.read_text() == '{"a": 1}\n'
    assert output_path(reference).name == "thing.out.json"
    assert json.loads(output_path(reference).read_text()) == {"a": 2}


@pytest.mark.parametrize("actual", [{"a": True}, {"a": 1.0}, {"b": 2, "a": 1}])
def test_json_types_and_key_order_count(tmp_path, actual):
    reference = tmp_path / "thing.json"
    reference.write_text('{"a": 1, "b": 2}\n' if "b" in actual else '{"a": 1}\n')
    with pytest.raises(pytest.fail.Exception):
        assert_matches_reference(actual, reference)


def test_a_match_passes_and_removes_a_stale_output(tmp_path):
    reference = tmp_path / "thing.json"
    reference.write_text('{"a": 1}')
    output_path(reference).write_text("stale")
    assert_matches_reference({"a": 1}, reference)
    assert not output_path(reference).exists()
