"""What the fresh-install tests share: a new virtualenv, pip into it, and their gate.

``tests/test_docs_fresh.py`` builds the site from a copy of the tree with the ``docs``
extra alone; ``tests/test_installation.py`` follows the Installation page with the wheel.
Each makes a virtualenv and pip-installs into it (a minute or more between them), so they
run only when asked, ``FRESH_VENV_TEST=1``: in CI once, in the Python 3.11 + Django 5.2
cell's SQLite run (noxfile.py), not in every developer's ``make test``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

wanted = pytest.mark.skipif(
    os.environ.get("FRESH_VENV_TEST") != "1",
    reason="a new virtualenv and pip: FRESH_VENV_TEST=1 runs it (CI does, in one cell)",
)


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run a command; its stdout, or a failure with both of its outputs."""
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def new_venv(path: Path) -> Path:
    """A new virtualenv at ``path`` (this interpreter's Python); its ``python``."""
    run(sys.executable, "-m", "venv", path, cwd=path.parent)
    return path / "bin" / "python"


def timed(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> float:
    """Run a command (as :func:`run`); the seconds it took."""
    started = time.monotonic()
    run(*args, cwd=cwd, env=env)
    return time.monotonic() - started


def distributions(python: Path) -> set[str]:
    """The distributions installed in a virtualenv, by normalized name."""
    listed = json.loads(run(python, "-m", "pip", "list", "--format", "json", cwd=python.parent))
    return {p["name"].lower().replace("_", "-") for p in listed}


def venv_env(python: Path, **extra: str) -> dict[str, str]:
    """An environment in which the virtualenv's commands come first on PATH and nothing
    of this process's Python (its DJANGO_SETTINGS_MODULE, PYTHONPATH) leaks in."""
    keep = {
        k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH"}
    }
    return {**keep, "PATH": f"{python.parent}:{os.environ.get('PATH', '')}", **extra}
