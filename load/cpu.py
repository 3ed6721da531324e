"""CPU seconds the server side spent on a run: gunicorn's processes and the PostgreSQL
backends serving the load database.

Throughput and latency depend on everything else the machine runs; the CPU time each
request costs the server hardly does, so ``make load`` prints it beside them and two
builds can be compared on a busy machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import psutil

__all__ = ["CpuMeter"]

# A backend's title: "postgres: [<cluster>: ]<user> <database> <client> <state>" (Debian
# names the cluster, "15/main:").
_BACKEND = re.compile(r"^postgres: (?:\S+: )?\S+ (?P<database>\S+) ")


def _seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


@dataclass
class CpuMeter:
    """``start()`` before the load, ``stop()`` after it: ``server`` and ``database`` are
    the CPU seconds spent in between (processes that ended meanwhile are not counted)."""

    server_pid: int
    database: str
    _start: dict[int, float] = field(default_factory=dict)
    server: float = 0.0
    database_seconds: float = 0.0

    def _processes(self) -> dict[int, tuple[str, psutil.Process]]:
        found: dict[int, tuple[str, psutil.Process]] = {}
        try:
            master = psutil.Process(self.server_pid)
            for process in [master, *master.children(recursive=True)]:
                found[process.pid] = ("server", process)
        except psutil.NoSuchProcess:
            pass
        for process in psutil.process_iter(["cmdline"]):
            title = " ".join(process.info["cmdline"] or [])
            match = _BACKEND.match(title)
            if match and match["database"] == self.database:
                found[process.pid] = ("database", process)
        return found

    def _read(self) -> dict[int, tuple[str, float]]:
        readings: dict[int, tuple[str, float]] = {}
        for pid, (kind, process) in self._processes().items():
            try:
                readings[pid] = (kind, _seconds(process))
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return readings

    def start(self) -> None:
        self._start = {pid: seconds for pid, (_, seconds) in self._read().items()}

    def stop(self) -> None:
        self.server = self.database_seconds = 0.0
        for pid, (kind, seconds) in self._read().items():
            spent = seconds - self._start.get(pid, 0.0)
            if kind == "server":
                self.server += spent
            else:
                self.database_seconds += spent

    def summary(self, requests: int) -> str:
        per = max(requests, 1) / 1000
        return (
            f"server CPU: gunicorn {self.server:.1f} s ({self.server / per:.2f} ms/request), "
            f"PostgreSQL {self.database_seconds:.1f} s "
            f"({self.database_seconds / per:.2f} ms/request)"
        )
