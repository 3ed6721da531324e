"""``make bench-listen`` keeps working: with five listeners and a few runs it serves,
listens, runs, counts and prints its table beside the goals (bench/listen.py).

Timings are the bench's business, never a test's: this checks that every notification
of the runs reaches its listeners (none lost), that the figures are printed, and that the
server it started is gone. Skipped without Redis on 127.0.0.1:6379.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _redis_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.mark.skipif(not _redis_up(), reason="no Redis on 127.0.0.1:6379")
def test_the_bench_hears_every_run_and_prints_its_figures() -> None:
    command = [sys.executable, "-m", "bench.listen", "--listeners", "5", "--events", "6"]
    command += ["--interval", "0.02", "--settle", "0.2", "--grace", "5"]
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    bench = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        text, errors = bench.communicate(timeout=240)
    finally:
        bench.terminate()  # it stops its server on SIGTERM
        bench.wait(timeout=60)
    assert bench.returncode == 0, errors[-3000:]
    assert "5 listeners (0 on the shared order)" in text, text
    assert "6 runs, 6 notifications expected, 6 read, 0 lost, 0 duplicated" in text, text
    table = re.compile(r"^\s+5\s+\d+ ms\s+\d+ ms\s+\d+ ms .*\s0\s+ok$", re.M)
    assert table.search(text) is not None, text
    # The server it started (uvicorn and its workers, on the bench's own channel) is gone.
    assert _servers_of(bench.pid) == []


def _servers_of(pid: int) -> list[int]:
    found = []
    for process in psutil.process_iter(["pid"]):
        try:
            channel = process.environ().get("EVENTS_CHANNEL", "")
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        if channel.startswith(f"bench-listen-{pid}-"):
            found.append(process.pid)
    return found
