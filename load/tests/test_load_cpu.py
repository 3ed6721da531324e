"""``make load``'s CPU meter (load/cpu.py): the CPU seconds a server's process group and
the load database's PostgreSQL backends spent between ``start()`` and ``stop()``."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from load.cpu import _BACKEND, CpuMeter

# A master that starts a worker; only the worker burns CPU, after a signal on stdin.
_SERVER = """
import subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", '''
import sys, time
sys.stdin.readline()
end = time.process_time() + 0.6
while time.process_time() < end:
    pass
print("done", flush=True)
sys.stdin.readline()
'''], stdin=sys.stdin, stdout=sys.stdout)
worker.wait()
"""


def test_the_meter_counts_the_cpu_a_servers_workers_spend_between_start_and_stop() -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        time.sleep(0.5)  # the worker is started and waiting: its start-up is not counted
        meter = CpuMeter(server_pid=server.pid, database="no-such-database")
        meter.start()
        assert server.stdin and server.stdout
        server.stdin.write("go\n")
        server.stdin.flush()
        assert server.stdout.readline().strip() == "done"
        meter.stop()
        assert 0.5 <= meter.server < 2.0
        assert meter.database_seconds == 0.0
        assert "ms/request" in meter.summary(600)
        assert f"({meter.server / 0.6:.2f} ms/request)" in meter.summary(600)
    finally:
        if server.stdin:
            server.stdin.close()  # EOF: the worker returns, then the master
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.mark.parametrize(
    ("title", "database"),
    [
        ("postgres: 15/main: root affordances_load 127.0.0.1(40312) idle", "affordances_load"),
        ("postgres: root affordances_load [local] SELECT", "affordances_load"),
        ("postgres: 15/main: root test 127.0.0.1(40312) idle in transaction", "test"),
    ],
)
def test_a_backends_title_names_its_database(title: str, database: str) -> None:
    match = _BACKEND.match(title)
    assert match is not None and match["database"] == database


def test_other_processes_are_not_backends() -> None:
    assert _BACKEND.match("python manage.py runserver") is None
    assert _BACKEND.match("/usr/lib/postgresql/15/bin/postgres -D /var/lib/x") is None
