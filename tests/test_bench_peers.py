"""``make bench-peers`` (bench/peers/) runs end to end: a tiny run in the peers'
virtualenv prints every face's line, every ratio and the goals' verdicts.

The peers need the MCP SDK 1.x (this virtualenv has the 2.x), so the run is a subprocess
of ``.venv-peers`` (``make bench-peers`` makes it); skipped when it is absent.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
TINY = ["--tickets", "20", "--rounds", "2", "--warmup", "0"]

pytestmark = pytest.mark.skipif(
    not PEERS_PYTHON.exists(), reason="no .venv-peers: `make bench-peers` makes it"
)


def test_a_tiny_run_prints_every_line_and_ratio() -> None:
    from bench.peers.run import _comparisons, _faces  # stdlib only at import

    page = 5
    result = subprocess.run(
        [PEERS_PYTHON, "-m", "bench.peers.run", *TINY, "--page", str(page), "--profile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    number = r"\d+\.\d\d"
    for face in _faces({"read": 1, "moving": list(range(6))}, page):
        assert any(
            re.fullmatch(
                rf"{re.escape(face.label)} +{number} +{number} +{number} +{number} +\d+", x
            )
            for x in lines
        ), face.label
    comparisons = _comparisons(page)
    for comparison in comparisons:
        (row,) = [x for x in lines if x.startswith(comparison.label + " ")]
        assert re.search(rf" {number}x +{number}-{number} ", row), row
        if comparison.goal is None:
            assert row.endswith("(no goal)"), row
        else:
            assert re.search(rf"≤ {comparison.goal:.2f}x (met|MISSED)$", row), row
    assert re.search(r"^Load average \(1/5/15 min\): ", result.stdout, re.M)
    goals = sum(c.goal is not None for c in comparisons)
    (verdict,) = re.findall(r"^Goals: (\d+) met, (\d+) missed\.$", result.stdout, re.M)
    assert sum(map(int, verdict)) == goals
    # --profile: where the time goes under every goal (a missed one always has it), each
    # pair run again — the transitions on rows reset between requests, as measured.
    assert result.stdout.count("  where the time goes (cProfile, 30 requests each") == goals
    for comparison in comparisons:
        if comparison.goal is not None:
            assert re.search(rf"^{re.escape(comparison.label)}: (met|MISSED)$", result.stdout, re.M)
    assert "affordances/" in result.stdout.split("Goals:")[1]
