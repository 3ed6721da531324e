"""The Installation page, followed in a fresh virtualenv: its commands, as shown.

The commands are the page's own (its ``sh`` block "From the wheel or the sdist"), so the
page cannot drift from what installs: its ``make dist`` stands for the wheel the adoption
tests build once per session (the same ``python -m build`` from the same files) beside
an sdist built here; each ``pip install`` line then runs as written, in a new virtualenv,
from a directory whose ``dist/`` holds those two files — a file name the page gets
wrong fails (the sdist's line, last, builds it and replaces the wheel's install). Then
the app imports, and a project made by ``django-admin startproject`` with the page's
settings excerpts passes ``django-admin check`` without an issue, migrates, and passes
the database checks too. It needs ``FRESH_VENV_TEST=1`` (tests/fresh_venv.py).
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.fresh_venv import new_venv, run, timed, venv_env, wanted

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "installation.md"
FENCE = re.compile(r'^```(\w+) title="([^"]*)"\n(.*?)^```', re.M | re.S)
FROM_THE_WHEEL = "in the clone, then in your project's virtualenv"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]

pytestmark = wanted


def _blocks(language: str, title: str) -> list[str]:
    return [
        code
        for lang, name, code in FENCE.findall(PAGE.read_text())
        if (lang, name) == (language, title)
    ]


def _commands() -> list[list[str]]:
    """The page's commands for the wheel and the sdist, each split as a shell would."""
    (block,) = _blocks("sh", FROM_THE_WHEEL)
    return [words for line in block.splitlines() if (words := shlex.split(line, comments=True))]


def _sdist(into: Path) -> Path:
    """The sdist of what the wheel is made of (``make dist`` builds both)."""
    source = into / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "affordances", source / "affordances", ignore=shutil.ignore_patterns("__pycache__")
    )
    run(sys.executable, "-m", "build", "--sdist", "--outdir", into / "dist", source, cwd=into)
    (sdist,) = (into / "dist").glob("django_affordances-*.tar.gz")
    return sdist


def test_the_installation_page_installs_the_wheel_and_the_sdist_into_a_new_project(
    adoption_wheel: Path, tmp_path: Path, record_property: Any
) -> None:
    commands = _commands()
    assert commands[0] == ["make", "dist"], commands
    installs = commands[1:]
    assert installs and all(words[:2] == ["pip", "install"] for words in installs), installs

    work = tmp_path / "clone"
    _sdist(work)
    shutil.copy(adoption_wheel, work / "dist" / adoption_wheel.name)
    python = new_venv(tmp_path / "venv")
    env = venv_env(python)
    pip = sum(
        timed(python, "-m", "pip", *words[1:], "--quiet", cwd=work, env=env) for words in installs
    )
    record_property("timing", f"the Installation page's pip installs took {pip:.0f} s")

    shown = run(
        python,
        "-c",
        "import affordances, affordances.rest, importlib.metadata as m; "
        "print(m.version('django-affordances'))",
        cwd=tmp_path,
        env=env,
    )
    assert shown.strip() == VERSION

    project = tmp_path / "project"
    project.mkdir()
    run(python.parent / "django-admin", "startproject", "mysite", ".", cwd=project, env=env)
    settings = project / "mysite" / "settings.py"
    excerpts = _blocks("python", "excerpt: settings.py")
    assert excerpts
    settings.write_text("\n".join([settings.read_text(), *excerpts]))
    checked = venv_env(python, DJANGO_SETTINGS_MODULE="mysite.settings", PYTHONPATH=str(project))
    admin = python.parent / "django-admin"

    said = run(admin, "check", cwd=project, env=checked)
    run(admin, "migrate", "--noinput", cwd=project, env=checked)
    said_with_database = run(admin, "check", "--database", "default", cwd=project, env=checked)

    assert "System check identified no issues" in said, said
    assert "System check identified no issues" in said_with_database, said_with_database
