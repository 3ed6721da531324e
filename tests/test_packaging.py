"""What each install brings: the library's own dependencies, and the demo's extra.

The wheel holds ``affordances`` only (the adoption test builds it); here, from the
source tree, the declared dependencies are checked against what the code imports, so
neither a missing requirement nor a superfluous one goes unnoticed.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions, version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _imported_distributions(*packages: str) -> set[str]:
    """The third-party distributions whose modules the packages' code imports."""
    owners = packages_distributions()
    local = {
        "affordances",
        "bench",
        "config",
        "orders",
        "procurement",
        "experiment",
        "tests",
        "load",
    }
    found: set[str] = set()
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top in local or top in sys.stdlib_module_names:
                        continue
                    found |= {_normal(d) for d in owners.get(top, [top])}
    return found


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


def _names(requirements: list[str]) -> set[str]:
    return {_normal(Requirement(r).name) for r in requirements}


def _extra(name: str) -> set[str]:
    """An extra's requirements, the extras it names expanded."""
    names: set[str] = set()
    for line in PROJECT["optional-dependencies"][name]:
        requirement = Requirement(line)
        if _normal(requirement.name) == "django-affordances":
            for inner in requirement.extras:
                names |= _extra(inner)
        else:
            names.add(_normal(requirement.name))
    return names


def test_the_library_requires_exactly_what_it_imports() -> None:
    # graphviz is imported lazily by the admin's diagrams: the `graphviz` extra;
    # django-oauth-toolkit only by affordances.mcp.oauth, which a project imports: `oauth`;
    # redis only by the Redis events broker a project names in EVENTS_BROKER: `live`;
    # opentelemetry-api only by affordances.tracing, guarded: `opentelemetry`;
    # django-guardian only with guardian's backend configured: `guardian`.
    optional = (
        _extra("graphviz")
        | _extra("oauth")
        | _extra("live")
        | _extra("opentelemetry")
        | _extra("guardian")
    )
    imported = _imported_distributions("affordances") - optional
    # `opentelemetry` is a namespace every OpenTelemetry distribution shares (the SDK the
    # tests install too): the library imports the API's modules only.
    imported = {name for name in imported if not name.startswith("opentelemetry-")}
    assert _names(PROJECT["dependencies"]) == imported


def test_the_demo_extra_serves_the_demo_project() -> None:
    imported = _imported_distributions("config", "orders", "procurement")
    missing = imported - _names(PROJECT["dependencies"]) - _extra("demo")
    assert not missing
    # None of the test or experiment toolchain comes with `make demo`.
    assert not _extra("demo") & {"pytest", "playwright", "matplotlib", "tiktoken", "mcp"}


def test_the_wheel_is_the_library_alone() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["packages"]["find"]["include"] == ["affordances*"]
    assert "py.typed" in setuptools["package-data"]["affordances"]
    assert (ROOT / "affordances" / "py.typed").exists()
    assert PROJECT["license"] == "MIT"


def test_one_version_in_the_project_the_metadata_and_the_changelog() -> None:
    # RELEASING.md: pyproject.toml is the one source, read back from the installed
    # metadata (`make test` reinstalls when pyproject.toml changes); a release dates its
    # CHANGELOG heading in the same commit.
    assert version("django-affordances") == PROJECT["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    released = re.findall(r"^## (\d+\.\d+\.\d+\S*) — \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert released and released[0] == PROJECT["version"]
