"""``make bench`` keeps working: every table prints, with every face and ratio.

Timings are the command's business, never a test's: this only checks that it runs and
reports each face (and that the query counts it prints stay constant in N).
"""

from __future__ import annotations

import os
import signal
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


def test_ctrl_c_stops_it_cleanly_and_keeps_what_was_measured(tmp_path: Path) -> None:
    """SIGINT (Ctrl-C) once the lists are measured and the (endless, here) transitions
    begin: exit 130, no traceback, the lists' rows on stdout, the database dropped."""
    command = [sys.executable, "manage.py", "bench_affordances", "--sections"]
    command += ["lists,transitions", "--sizes", "3", "--rounds", "1", "--min-seconds", "0"]
    command += ["--transitions", "1000000"]
    env = {**os.environ, "DATABASE_URL": "sqlite:///bench.sqlite3"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    out = tmp_path / "stdout"
    with out.open("w") as stdout:
        bench = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            # As a terminal starts it: a shell without job control starts background
            # commands with SIGINT ignored, and Python would inherit that.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        assert bench.stderr is not None
        progress = []
        try:
            for line in bench.stderr:  # the progress lines, as they come
                progress.append(line)
                if line.startswith("1000000 transitions"):
                    bench.send_signal(signal.SIGINT)
                    break
            rest = bench.stderr.read()
            code = bench.wait(timeout=120)
        finally:
            if bench.poll() is None:
                bench.kill()
                bench.wait()
    errors = "".join(progress) + rest
    assert code == 130, errors[-3000:]
    assert "Traceback" not in errors, errors[-3000:]
    assert "Interrupted: the rows above are what was measured." in errors
    assert "Dropping the throwaway database." in errors
    text = out.read_text()
    assert "REST JSON, affordances" in text and "Queries constant in N" in text, text
    assert "A transition (ship)" not in text
