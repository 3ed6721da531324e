"""Import paths kept for one release after their names moved: they still work, they warn,
and nothing in the project uses them any more."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from affordances.rest import base

ROOT = Path(__file__).resolve().parent.parent
OLD = "affordances.rest.exceptions"
SHIM = ROOT / "affordances" / "rest" / "exceptions.py"
# Where the project's own code, settings and documentation live (not the changelog, which
# records the move).
PLACES = [
    "affordances",
    "tests",
    "demo_tests",
    "config",
    "orders",
    "procurement",
    "experiment",
    "load",
    "bench",
    "clients",
    "docs",
]
SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt"}


def test_the_old_path_still_works_and_warns(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another test may have imported it already (the module-level walk of test_redos):
    # import it afresh so that its one warning is raised here.
    monkeypatch.delitem(sys.modules, OLD, raising=False)
    with pytest.warns(DeprecationWarning, match=r"0\.2.*affordances\.rest\.base") as caught:
        old = importlib.import_module(OLD)
    assert len(caught) == 1
    assert old.__all__ == base.__all__
    for name in old.__all__:
        assert getattr(old, name) is getattr(base, name), name


def _sources() -> list[Path]:
    found = [ROOT / "pyproject.toml", ROOT / "mkdocs.yml", ROOT / "README.md"]
    for place in PLACES:
        found += [
            path
            for path in (ROOT / place).rglob("*")
            if path.suffix in SUFFIXES
            and not {"__pycache__", "node_modules"} & set(path.parts)
            and path.is_file()
        ]
    return [path for path in found if path not in (SHIM, Path(__file__).resolve())]


def _imports_old_module(tree: ast.AST) -> bool:
    """``from affordances.rest import exceptions``: the one spelling a text search misses."""
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == "affordances.rest"
        and any(alias.name == "exceptions" for alias in node.names)
        for node in ast.walk(tree)
    )


def _uses_old_path(path: Path) -> bool:
    text = path.read_text(errors="replace")
    if OLD in text or "affordances/rest/exceptions" in text:
        return True
    return path.suffix == ".py" and _imports_old_module(ast.parse(text))


def test_nothing_in_the_project_uses_the_old_path() -> None:
    users = [str(path.relative_to(ROOT)) for path in _sources() if _uses_old_path(path)]
    assert users == []
