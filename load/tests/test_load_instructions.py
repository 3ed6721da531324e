"""``load/instructions.py``: the read mix it counts answers 200 on every request, and
valgrind's summary line is read as it prints it (the count itself needs valgrind and
minutes: it is a command, not a test)."""

from __future__ import annotations

import pytest

from demo_tests.conftest import Demo
from load.instructions import _COLLECTED, mix


@pytest.mark.django_db
def test_the_read_mix_runs_through_every_face(demo: Demo) -> None:
    mix(2)  # asserts a 200 for each request of each kind


def test_valgrinds_count_is_read_from_its_summary() -> None:
    summary = "==25910== \n==25910== Collected : 3346622193\n==25910== I   refs: 3,346,622,193"
    match = _COLLECTED.search(summary)
    assert match is not None and int(match.group(1)) == 3346622193
