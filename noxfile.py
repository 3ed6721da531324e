"""The test matrix: every supported Python and Django, defined here and nowhere else.

``make matrix`` runs it here, ``.ci/run`` in CI. The cells (``CELLS`` below):

==========  ==========  ====================  ==================================
Python      Django      databases             suite
==========  ==========  ====================  ==================================
3.11        5.2 LTS     SQLite, PostgreSQL    the whole suite (``make test``; on
                                              PostgreSQL without ``experiment/tests``
                                              and ``load/tests``, which run on SQLite)
3.13        6.0         SQLite                the library's own tests (tests/)
3.13        6.1         SQLite, PostgreSQL    the library's own tests, and the
                                              wheel into a Django 6.1 project
==========  ==========  ====================  ==================================

**Why nox and not tox.** The Python 3.13 cells run inside a Debian trixie chroot
(``.ci/python313-chroot``: these machines have no Python 3.13 of their own) while the
Python 3.11 cell runs in the project's ``.venv`` through ``make test``; the cells pin
Django, time each database, compute the warning filters from ``pyproject.toml`` and build
a wheel into a throwaway project. In nox all of that is a Python function next to the
table; tox would need a plugin or wrapper scripts for each of those steps, and the
matrix would no longer be in one file.

**Why the Python 3.13 cells run a subset.** ``.ci/run`` has 20 minutes on 2 cores and the
whole suite takes about 5 minutes on SQLite and 6 on PostgreSQL (``-n 2``): the LTS
cell alone, with lint and types, is 12 of them. The Python 3.13 cells therefore run the
library's own tests — ``tests/``, its behaviour on its own test models with minimal
settings and the demo made unimportable (``-p tests.no_demo``), including the adoption
test that installs the wheel into a new project — and leave out what tests the
repository's other programs rather than the library on a Django version: the demo's
tests (``demo_tests/``: its domains, golden files, the browser test with Chromium and the
third-party npm clients), the experiment's (``experiment/tests``) and the load tooling's
(``load/tests``). The whole suite still runs on the LTS: on SQLite, and on PostgreSQL
but for what no database changes (the experiment's and the load tooling's tests, the
third-party clients, and ``SAME_ON_ANY_DATABASE``: tests whose processes have settings and
a database of their own). The adoption tests build and install a wheel into a new project
(about a minute and a half): they run once per Django line and once per database — on the
LTS's PostgreSQL run and on the Django 6.1 SQLite run, where the newest Django is what a
new project gets (``ADOPTION_TEST=0`` elsewhere); the third, the claims desk
(``tests/test_adoption_claims.py``), is written for Django 6.1 and runs in that cell only.
The fresh-virtualenv tests (the docs site with the ``docs`` extra alone, the Installation
page's commands: ``FRESH_VENV_TEST=1``) run once, in the LTS cell's SQLite run.

**Warnings.** In every cell a ``DeprecationWarning`` or ``PendingDeprecationWarning`` —
every ``RemovedInDjango…Warning`` is one or the other — attributed to the library's own
code (``affordances``) is an error: the filters of ``pyproject.toml`` are kept and these
two are added after them (``-o filterwarnings``, through ``PYTEST_ADDOPTS`` so that
``make test`` passes them on).

Sessions: ``nox -l``. On a machine with a ``python3.13`` on ``PATH`` the Python 3.13 cells
run without the chroot (``nox -t py313``). ``MATRIX_DATABASE_URL=postgres://…`` names the
PostgreSQL server's database for the PostgreSQL runs (``.ci/run`` sets it); without it
they are skipped, said so, unless ``CI`` is set, where that is an error.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "venv"
nox.options.error_on_external_run = True
# Inside the chroot the sessions' virtualenvs stay in the chroot's root, not in .nox/.
if os.environ.get("PYTHON313_CHROOT"):
    nox.options.envdir = "/opt/nox-envs"

ROOT = Path(__file__).parent
WHOLE = "whole"  # make test: every test of the repository
LIBRARY = "library"  # tests/: the library's own tests, the demo unimportable


@dataclass(frozen=True)
class Cell:
    python: str
    django: str
    databases: tuple[str, ...]
    suite: str

    @property
    def id(self) -> str:
        return f"django{self.django}"


CELLS = (
    Cell("3.11", "5.2", ("sqlite", "postgres"), WHOLE),
    Cell("3.13", "6.0", ("sqlite",), LIBRARY),
    Cell("3.13", "6.1", ("sqlite", "postgres"), LIBRARY),
)
# The cell whose SQLite run includes the adoption test and the wheel check.
NEWEST = CELLS[-1]
# Demo tests that run Django in processes of their own, with their own settings and
# database (settings from the environment, check --deploy, the bench's throwaway
# database): what the suite's database is changes nothing in them.
SAME_ON_ANY_DATABASE = (
    "demo_tests/clients",
    "demo_tests/test_settings.py",
    "demo_tests/test_production.py",
    "demo_tests/test_bench_command.py",
)
# Spread over the machine's cores, as CI runs the suite.
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider", "-n", "2")
OWN_CODE = r"affordances(\.|$)"
# `python -c VERSIONS 3.11 5.2`: prints the versions, fails unless they are the cell's.
VERSIONS = """
import sys, django
python, wanted = "%d.%d" % sys.version_info[:2], sys.argv[1:]
print("Python", sys.version.split()[0], "Django", django.get_version())
if [python, "%d.%d" % django.VERSION[:2]] != wanted:
    sys.exit("not Python %s with Django %s" % tuple(wanted))
"""


def _warning_filters() -> str:
    """``-o filterwarnings=…``: pyproject's filters, then own deprecations as errors."""
    pyproject = nox.project.load_toml(ROOT / "pyproject.toml")
    ini = pyproject.get("tool", {}).get("pytest", {}).get("ini_options", {})
    lines = [
        *ini.get("filterwarnings", []),
        f"error::DeprecationWarning:{OWN_CODE}",
        f"error::PendingDeprecationWarning:{OWN_CODE}",
    ]
    return shlex.join(["-o", "filterwarnings=" + "\n".join(lines)])


def _database_url(session: nox.Session, database: str) -> str | None:
    """The DATABASE_URL of a run, or None when PostgreSQL is not given (then it skips)."""
    if database == "sqlite":
        return ""  # unset (None in env=): the settings' default, SQLite
    url = os.environ.get("MATRIX_DATABASE_URL", "")
    if url.startswith("postgres"):
        return url
    if os.environ.get("CI"):
        session.error("MATRIX_DATABASE_URL=postgres://… is not set: the PostgreSQL run can't run")
    session.warn("MATRIX_DATABASE_URL=postgres://… is not set: skipping the PostgreSQL run")
    return None


def _timed(session: nox.Session, label: str, *args: str, **kwargs: object) -> str | None:
    """Run and time one database's run; its label if it failed (the others still run)."""
    started = time.monotonic()
    try:
        session.run(*args, **kwargs)  # type: ignore[arg-type]
    except nox.command.CommandFailed:
        return label
    finally:
        session.log(f"{label}: {time.monotonic() - started:.0f} s")
    return None


def _django(cell: Cell) -> str:
    major, minor = cell.django.split(".")
    return f"Django>={cell.django},<{major}.{int(minor) + 1}"


def _passed(session: nox.Session, failed: list[str | None]) -> None:
    if any(failed):
        session.error("failed: " + "; ".join(label for label in failed if label))


def _addopts() -> str:
    return " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS", ""), _warning_filters()]))


@nox.session(python=False, tags=["lts", "py311"])
@nox.parametrize("cell", [nox.param(c, id=c.id) for c in CELLS if c.suite == WHOLE])
def lts(session: nox.Session, cell: Cell) -> None:
    """Python 3.11 + Django 5.2 LTS: the whole suite (make test) on each database.

    It runs in the project's ``.venv``, the one ``make test``, the linters and the type
    checker use (pip resolves Django 5.2 there: Django 6 needs Python 3.12); building a
    second one would cost a minute of the CI's budget for the same packages.
    """
    python = ROOT / ".venv" / "bin" / "python"
    if not python.exists():
        session.error("no .venv: run it with `make matrix` (or `make test` once)")
    session.run(str(python), "-c", VERSIONS, cell.python, cell.django, external=True)
    failed = []
    for database in cell.databases:
        url = _database_url(session, database)
        if url is None:
            continue
        # The experiment's and the load tooling's tests check those programs' own logic,
        # the third-party clients (demo_tests/clients: npm packages against a live
        # server) the documents and protocols the server writes, and SAME_ON_ANY_DATABASE
        # start processes with settings and a database of their own — the same on any
        # database: they run once, on SQLite. PostgreSQL runs the rest.
        only_demo = (
            [
                "DEMO_TESTS=demo_tests "
                + " ".join(f"--ignore={path}" for path in SAME_ON_ANY_DATABASE)
            ]
            if database == "postgres"
            else []
        )
        suite = "library and demo suites" if only_demo else f"{cell.suite} suite"
        run = _timed(
            session,
            f"Python {cell.python}, Django {cell.django}, {database}, {suite}",
            "make",
            "--no-print-directory",
            "test",
            "PYTEST_ARGS=" + " ".join(PYTEST_ARGS),
            *only_demo,
            env={
                "DATABASE_URL": url or None,
                "PYTEST_ADDOPTS": _addopts(),
                # The wheel into a new project: once per Django and once per database
                # (here on PostgreSQL, on SQLite in the Django 6.1 cell).
                "ADOPTION_TEST": "1" if database == "postgres" else "0",
                # The docs site from a fresh clone with the docs extra alone, and the
                # Installation page in a new virtualenv (tests/fresh_venv.py): neither
                # depends on the suite's database, so once, here.
                "FRESH_VENV_TEST": "1" if database == "sqlite" else "0",
            },
            external=True,
        )
        failed.append(run)
    _passed(session, failed)


@nox.session(tags=["py313"])
@nox.parametrize(
    "python,cell",
    [nox.param(c.python, c, id=c.id, tags=[c.id]) for c in CELLS if c.suite == LIBRARY],
)
def tests(session: nox.Session, cell: Cell) -> None:
    """Python 3.13 + a Django: the library's own tests on each database of the cell."""
    session.install(_django(cell), "-e", ".[dev]")
    session.run("python", "-c", VERSIONS, cell.python, cell.django)
    failed = []
    for database in cell.databases:
        url = _database_url(session, database)
        if url is None:
            continue
        adoption = cell == NEWEST and database == "sqlite"
        run = _timed(
            session,
            f"Python {cell.python}, Django {cell.django}, {database}, {cell.suite} tests",
            "python",
            "-m",
            "pytest",
            "tests",
            "-p",
            "tests.no_demo",
            *PYTEST_ARGS,
            env={
                "DATABASE_URL": url or None,
                "PYTEST_ADDOPTS": _addopts(),
                "ADOPTION_TEST": "1" if adoption else "0",
                "FRESH_VENV_TEST": "0",  # once, in the LTS cell's SQLite run
            },
        )
        failed.append(run)
    if cell == NEWEST:
        _wheel_into_a_project(session, cell)
    _passed(session, failed)


def _wheel_into_a_project(session: nox.Session, cell: Cell) -> None:
    """The wheel into a new Django project's virtualenv: Django stays where it was."""
    started = time.monotonic()
    tmp = Path(session.create_tmp())
    dist, venv = tmp / "dist", tmp / "project-venv"
    for path in (dist, venv):
        shutil.rmtree(path, ignore_errors=True)
    session.run("python", "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), ".")
    wheels = list(dist.glob("django_affordances-*.whl"))
    if not wheels:  # nox --install-only: nothing above ran
        return
    (wheel,) = wheels
    session.run("python", "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    session.run(python, "-m", "pip", "install", "--quiet", _django(cell), external=True)
    version = "import django; print(django.get_version())"
    before = session.run(python, "-c", version, external=True, silent=True)
    session.run(python, "-m", "pip", "install", "--quiet", f"{wheel}[jwt]", external=True)
    after = session.run(python, "-c", version, external=True, silent=True)
    session.run(python, "-m", "pip", "check", external=True)
    if before != after:
        session.error(f"installing the wheel changed Django from {before} to {after}")
    session.log(
        f"the wheel into a new Django {str(after).strip()} project: Django unchanged, "
        f"pip check passes, {time.monotonic() - started:.0f} s"
    )
