"""The documentation site builds from a fresh clone with the ``docs`` extra alone.

What a contributor gets from ``make docs-build`` on a new clone: the files a clone has (a
copy of the tree's tracked and untracked-but-not-ignored files, so that what is not
committed yet is built too; CI runs on a clean clone, where the two are the same), a new
virtualenv with ``pip install '.[docs]'`` and nothing else, then ``mkdocs build
--strict``. The test prints how long pip and the build took (shown at the end of the
run). It needs ``FRESH_VENV_TEST=1`` (tests/fresh_venv.py says why and where it runs).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fresh_venv import distributions, new_venv, timed, venv_env, wanted

ROOT = Path(__file__).resolve().parents[1]
# The test toolchain: none of it may be needed to build the site.
DEV_ONLY = {"pytest", "playwright", "mypy"}

pytestmark = wanted


def _clone(into: Path) -> Path:
    """The tree as a clone of it would have it: tracked and untracked files, not the
    ignored ones (.venv, site/, build/, caches)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git working tree: nothing says what a clone would have")
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():  # a tracked file deleted in the tree is not in a clone-to-be
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def test_the_site_builds_from_a_fresh_clone_with_the_docs_extra_alone(
    tmp_path: Path, record_property: Any
) -> None:
    clone = _clone(tmp_path / "clone")
    python = new_venv(tmp_path / "venv")
    env = venv_env(python, NO_MKDOCS_2_WARNING="1")

    pip = timed(python, "-m", "pip", "install", "--quiet", ".[docs]", cwd=clone, env=env)
    site = tmp_path / "site"
    build = timed(
        python.parent / "mkdocs", "build", "--strict", "--site-dir", site, cwd=clone, env=env
    )

    # Printed (CI shows it under "timings"), never asserted: a timing is not a test.
    timing = f"docs built in {build:.0f} s after pip (pip took {pip:.0f} s)"
    print(timing)
    record_property("timing", timing)
    assert not distributions(python) & DEV_ONLY
    assert (site / "index.html").is_file() and (site / "installation" / "index.html").is_file()
