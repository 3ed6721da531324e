"""The faces meet in the core, never in each other (issue 51, debt 5).

import-linter keeps a face from importing another (the layers contract's ``rest | admin
| mcp``). These tests catch what it cannot see: a face reaching another face's view
class through the URLconf, or sending a request through Django's handler to another
face; and the library speaking the vocabulary of the experiment run on it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "affordances"
FACES = ("rest", "admin", "mcp")


def _modules(face: str) -> list[Path]:
    return sorted((PACKAGE / face).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("face", FACES)
def test_no_face_imports_another(face):
    others = tuple(f"affordances.{other}" for other in FACES if other != face)
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules(face)
        for name in _imports(path)
        if name.startswith(others)
    }
    assert wrong == set()


def _view_classes_reached(path: Path) -> set[str]:
    """Where ``path`` reaches the class of the view a URL resolves to: the REST face's
    (``routes.list_view``, a match's ``func.cls``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in {"cls", "list_view"}:
            found.add(ast.unparse(node))
        elif isinstance(node, ast.Name) and node.id == "list_view":
            found.add(node.id)
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "getattr"
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value == "cls"
        ):
            found.add(ast.unparse(node))
    return found


def test_the_finder_sees_a_view_class_reached(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from affordances import routes\nroutes.list_view(r).page_query\nm.func.cls\n")
    assert _view_classes_reached(probe) == {"routes.list_view", "m.func.cls"}


@pytest.mark.parametrize("face", ("admin", "mcp"))
def test_no_face_but_rest_reaches_a_rest_view_through_the_urlconf(face):
    """The view serving a route is the REST face's: what another face needs of it (how
    a collection pages) is asked of the core (affordances.page_links)."""
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules(face)
        for name in _view_classes_reached(path)
    }
    assert wrong == set()


@pytest.mark.parametrize(
    "face",
    [
        "rest",
        "admin",
        pytest.param(
            "mcp",
            marks=pytest.mark.xfail(
                strict=True,
                reason="issue 51: MCP's forms profile still re-dispatches HTTP into the "
                "REST face (affordances/mcp/subrequest.py)",
            ),
        ),
    ],
)
def test_no_face_sends_a_request_through_djangos_handler(face):
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules(face)
        for name in _imports(path)
        if name.startswith("django.core.handlers")
    }
    assert wrong == set()


# The experiment compares interfaces A, B and C (docs/experiment/); the library has
# profiles, named as docs/protocol.md#mcp-profiles names them.
_EXPERIMENT = re.compile(
    r"interface [abc]\b|interface a|experiment|\b[abc]-(?:focus|compact)\b", re.I
)


def test_the_library_speaks_no_experiment_vocabulary():
    texts = [
        path
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix in {".py", ".html", ".txt", ".md", ".json"}
    ]
    assert texts
    found = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in texts
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if _EXPERIMENT.search(line)
    ]
    assert found == []
