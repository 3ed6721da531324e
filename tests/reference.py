"""The one golden-file mechanism of the test suites (drf-spectacular's ``assert_schema``).

:func:`assert_matches_reference` writes what the test produced beside the reference
(``catalog.json`` → ``catalog.out.json``, git-ignored) and fails when the two differ or
the reference is missing. It never writes a reference: after an intended change, review
the diff and copy the ``.out.json`` file over the reference yourself

    cp tests/golden/catalog.out.json tests/golden/catalog.json

so no run can pass by regenerating what it compares against.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest


def dumps(value: Any) -> str:
    """How references are written: indented JSON with a final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def output_path(reference: Path) -> Path:
    return reference.with_name(f"{reference.stem}.out{reference.suffix}")


def assert_matches_reference(actual: Any, reference: Path) -> None:
    """``actual`` (JSON data) equals the JSON of ``reference``; else fail with a diff."""
    out = output_path(reference)
    text = dumps(actual)
    out.write_text(text, encoding="utf-8")
    if not reference.exists():
        pytest.fail(
            f"{reference} is missing. The output is in {out}: review it, then "
            f"`cp {out} {reference}`.",
            pytrace=False,
        )
    expected = json.loads(reference.read_text(encoding="utf-8"))
    # As text: key order and JSON types count (in Python, 1 == 1.0 == True).
    if dumps(expected) == text:
        out.unlink(missing_ok=True)
        return
    diff = "\n".join(
        difflib.unified_diff(
            dumps(expected).splitlines(),
            text.splitlines(),
            fromfile=str(reference),
            tofile=str(out),
            lineterm="",
        )
    )
    pytest.fail(
        f"The output differs from {reference.name}. If the change is intended, review the "
        f"diff and `cp {out} {reference}`.\n{diff}",
        pytrace=False,
    )
