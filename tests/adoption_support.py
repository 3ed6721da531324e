"""What the adoption tests share: the wheel, a fresh virtualenv, a project written from a
documentation page, its database and its server.

An adoption test (``tests/test_adoption*.py``) installs the wheel built from this tree
into a new virtualenv, makes a project with ``django-admin startproject`` in an empty
directory (nothing of this repository is importable there), writes the project's files
from the code blocks of one page of the documentation (each block names its file on its
first line, ``# app/module.py`` or ``# app/module.py (append)``) and drives the project
over HTTP against ``runserver`` on 127.0.0.1, stopped whatever happens. On PostgreSQL
(``DATABASE_URL=postgres://…``) each project gets a database of its own, dropped at the
end.

The wheel is built once per test session (by whichever pytest-xdist worker asks first;
the others wait for it and reuse it); each project has its own virtualenv, so that each
test sees what a user who installs the wheel and that page's packages gets, and nothing
else. ``ADOPTION_TEST=0`` switches the adoption tests off.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

ROOT = Path(__file__).resolve().parents[1]
FILE_MARK = re.compile(r"^# (?P<path>[\w/]+\.py)(?P<append> \(append\))?$")
POSTGRES_DRIVER = "psycopg[binary]>=3.1,<4"

wanted = pytest.mark.skipif(
    os.environ.get("ADOPTION_TEST") == "0", reason="ADOPTION_TEST=0 switches it off"
)


def on_postgres() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith("postgres")


def this_django() -> str:
    """A requirement for the Django major.minor this test process runs (``Django>=6.1,
    <6.2``): a project's virtualenv otherwise gets the newest Django the wheel allows on
    its Python, which is not the matrix cell's own."""
    import django

    major, minor = django.VERSION[:2]
    return f"Django>={major}.{minor},<{major}.{minor + 1}"


def page_files(page: Path) -> dict[str, tuple[str, bool]]:
    """path → (code, append?) for every file block of a documentation page."""
    files: dict[str, tuple[str, bool]] = {}
    for block in re.findall(r"^( *)```python\n(.*?)^\1```", page.read_text(), re.M | re.S):
        code = textwrap.dedent(block[1])
        first, _, rest = code.partition("\n")
        mark = FILE_MARK.match(first)
        if mark:
            files[mark["path"]] = (rest, bool(mark["append"]))
    return files


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the wheel --------------------------------------------------------------------------


def _build_wheel(into: Path) -> Path:
    # From a copy of what the wheel is made of: a build/ left in the tree by an earlier
    # build would otherwise slip stale files into this one.
    source = into / "source"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "affordances", source / "affordances", ignore=shutil.ignore_patterns("__pycache__")
    )
    dist = into / "dist"
    run(sys.executable, "-m", "build", "--wheel", "--outdir", dist, source, cwd=into)
    (wheel,) = dist.glob("django_affordances-*.whl")
    return wheel


def session_wheel(factory: pytest.TempPathFactory) -> Path:
    """The wheel of this tree, built once for the whole session: under pytest-xdist the
    workers share their base directory's parent, and a lock there makes the first one
    build it while the others wait."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    home = shared / "adoption-wheel"
    home.mkdir(exist_ok=True)
    with (shared / "adoption-wheel.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = home / "wheel.txt"
        if not built.exists():
            built.write_text(str(_build_wheel(home)))
        return Path(built.read_text())


# --- the project ------------------------------------------------------------------------


@dataclass
class Project:
    path: Path
    python: Path
    env: dict[str, str]
    url: str
    wheel: Path
    ids: dict[str, Any] = field(default_factory=dict)

    def manage(self, *args: str) -> str:
        return run(self.python, "manage.py", *args, cwd=self.path, env=self.env)

    def shell(self, code: str) -> Any:
        """Run ``code`` in the project's ``manage.py shell``; its last line is JSON."""
        return json.loads(self.manage("shell", "-c", code).strip().splitlines()[-1])


@contextmanager
def _database() -> Iterator[str]:
    """The project's DATABASES (to append to its settings): a new PostgreSQL database
    when DATABASE_URL names a server, dropped afterwards; nothing (SQLite) otherwise."""
    url = os.environ.get("DATABASE_URL", "")
    if not on_postgres():
        yield ""
        return
    import psycopg

    parts = urlsplit(url)
    name = f"adoption_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            databases = {
                "default": {
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": name,
                    "USER": parts.username or "",
                    "PASSWORD": parts.password or "",
                    "HOST": parts.hostname or "",
                    "PORT": str(parts.port or ""),
                }
            }
            yield f"\nDATABASES = {databases!r}\n"
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def _serving(python: Path, path: Path, env: dict[str, str], url: str) -> Iterator[None]:
    """``runserver`` on 127.0.0.1 until the block ends, however it ends."""
    port = urlsplit(url).port
    server = subprocess.Popen(
        [python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx2.get(f"{url}/admin/login/", timeout=2)
                break
            except httpx2.TransportError:
                assert server.poll() is None, "runserver exited"
                assert time.monotonic() < deadline, "runserver did not answer in 60 s"
                time.sleep(0.3)
        yield
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


@contextmanager
def adopted(
    tmp: Path,
    *,
    wheel: Path,
    requirements: Sequence[str],
    page: Path,
    package: str,
    apps: Sequence[str],
    seed: str,
) -> Iterator[Project]:
    """A project made as a new user makes it, served until the block ends.

    A virtualenv with ``wheel`` and ``requirements`` (and a PostgreSQL driver on
    PostgreSQL); ``django-admin startproject {package} .``; ``startapp`` for each of
    ``apps``; the files of ``page``; ``makemigrations`` for the apps, ``migrate``; then
    ``seed`` (run in ``manage.py shell``, printing JSON on its last line) becomes the
    project's ``ids``.
    """
    venv = tmp / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp)
    python = venv / "bin" / "python"
    driver = [POSTGRES_DRIVER] if on_postgres() else []
    run(python, "-m", "pip", "install", "--quiet", *requirements, *driver, cwd=tmp)

    path = tmp / "project"
    path.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}",
        "HOME": str(tmp),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    run(venv / "bin" / "django-admin", "startproject", package, ".", cwd=path, env=env)
    for app in apps:
        run(python, "manage.py", "startapp", app, cwd=path, env=env)
    for name, (code, append) in page_files(page).items():
        target = path / name
        target.write_text(target.read_text() + "\n" + code if append else code)

    with _database() as databases:
        if databases:
            settings = path / package / "settings.py"
            settings.write_text(settings.read_text() + databases)
        made = Project(path, python, env, f"http://127.0.0.1:{free_port()}", wheel)
        made.manage("makemigrations", *apps)
        made.manage("migrate", "--noinput")
        made.ids = made.shell(seed)
        with _serving(python, path, env, made.url):
            yield made


def installed(project: Project) -> set[str]:
    """The distributions installed in the project's virtualenv (pip's own left out)."""
    listed = json.loads(
        run(project.python, "-m", "pip", "list", "--format", "json", cwd=project.path)
    )
    return {p["name"].lower() for p in listed} - {"pip", "setuptools"}


def driver_packages() -> set[str]:
    """What the PostgreSQL runs install besides a page's requirements."""
    return {"psycopg", "psycopg-binary"} if on_postgres() else set()
