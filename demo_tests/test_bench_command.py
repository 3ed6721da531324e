"""``make bench`` keeps working: every table prints, with every face and ratio.

Timings are the command's business, never a test's: this only checks that it runs and
reports each face (and that the query counts it prints stay constant in N).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_bench_prints_every_face_and_ratio() -> None:
    # Its own process: the command makes (and drops) a throwaway database of its own.
    command = [sys.executable, "manage.py", "bench_affordances", "--sizes", "3,6"]
    command += ["--rounds", "1", "--min-seconds", "0", "--transitions", "2", "--profile"]
    command += ["--profile-requests", "3"]
    env = {**os.environ, "DATABASE_URL": "sqlite:///bench.sqlite3"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    for face in (
        "REST JSON, affordances",
        "REST JSON, compact",
        "HAL-FORMS",
        "MCP list_orders (B)",
        "admin change list",
        "Object permissions (django-rules)",
        "plain DRF, has_perm per row",
        "catalog",
        "OpenAPI",
        "MCP tools/list",
        "REST action (execution path)",
        "MCP tools/call, vs the REST action",
    ):
        assert face in text, text
    assert "Queries constant in N on every face." in text
    # Where the time goes, under every goal (--profile; a missed one always has it): the
    # lists' own work is this library's, a transition's MCP envelope too.
    profiles = text.count("where the time goes")
    goals = text.count(" ok") + text.count("MISSED")
    # Lists (3 goals, 2 sizes), object permissions, documents, transitions (SQLite: 1).
    assert profiles == goals == 3 * 2 + 1 + 3 + 1, text
    assert "affordances/entries.py" in text, text
    assert "GC collections per request" in text, text
