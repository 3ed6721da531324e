"""The documentation site (docs/, mkdocs.yml) says what the code does, and the code cites
it correctly.

``make docs-build`` checks every link and anchor inside the site when it builds
(strictly: a warning fails). These tests check, without building it, what the build
cannot: the reference lists every setting, check, problem code, command and public name;
every ``docs/….md#anchor`` the code cites exists; no citation of the old external
specification by section number is left; the README stays short and its links resolve; every
code block of the tutorial and the how-to guides is either run by a test (the
tutorial's by ``tests/test_adoption.py``, "Adopt it in an existing project"'s by
``tests/test_adoption_existing.py``, "A claims desk"'s by ``tests/test_adoption_claims.py``)
or titled an excerpt.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import tomllib
import unicodedata
from functools import cache
from pathlib import Path

import pytest
import yaml

from affordances.checks import SETTING_CHECKS
from affordances.conf import DEFAULTS
from affordances.problems import ProblemCode

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# Where the project's own code, tests and prose live (not .venv, build/, site/ …).
SOURCES = ("affordances", "orders", "procurement", "config", "experiment", "load", "tests")
SOURCES_GLOB = ("demo_tests",)  # the demo's tests, where the tree has them
FENCE = re.compile(r"^( *)```([\w-]*)([^\n]*)\n(.*?)^\1```", re.M | re.S)
FILE_MARK = re.compile(r"^# (?P<path>[\w/]+\.py)(?P<append> \(append\))?$")
# How the external specification used to be cited (split: this file must not match it).
OLD_CITATION = "SPEC" + " §"
CITATION = re.compile(r"\bdocs/([\w./-]+\.md)(?:#([\w-]+))?")


def slug(heading: str) -> str:
    """Python-Markdown's toc slug of a heading's text (what mkdocs anchors are)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@cache
def anchors(page: Path) -> frozenset[str]:
    found = set()
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        explicit = re.search(r"\{#([\w-]+)\}\s*$", heading)
        found.add(explicit[1] if explicit else slug(heading))
    return frozenset(found)


def source_files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "pyproject.toml"]
    for top in (*SOURCES, *SOURCES_GLOB):
        if (ROOT / top).is_dir():
            files += [p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]
    files += [
        p
        for p in DOCS.rglob("*.md")
        # The experiment's generated reports are written by run_experiment.
        if (p.parent == DOCS / "experiment" and p.name == "index.md")
        or "experiment" not in p.relative_to(DOCS).parts[:1]
    ]
    return [f for f in files if f.exists()]


# --- the README ---------------------------------------------------------------------


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 200


def test_the_readme_links_resolve():
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) > 20
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), link
        if anchor and target.suffix == ".md":
            assert anchor in anchors(target), link


def test_the_experiment_and_the_performance_notes_are_pages_now():
    text = README.read_text()
    assert "## Performance" not in text and "## The experiment" not in text
    assert "| ratio | SQLite | PostgreSQL | goal |" in (DOCS / "performance.md").read_text()
    assert "A scripted run of every task" in (DOCS / "experiment" / "index.md").read_text()


# --- installation -------------------------------------------------------------------

# The extras of this repository's own tooling (the demo, the tests, the experiment, the
# site, the load test, the peers' benchmark); every other extra is for a project using the
# library, and the Installation page says what it adds.
TOOLING_EXTRAS = {"demo", "experiment", "dev", "clients", "llm-server", "docs", "load", "peers"}


def test_installation_is_the_first_page_after_home():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    assert nav[:2] == [{"Home": "index.md"}, {"Installation": "installation.md"}]


def test_the_installation_page_has_a_row_for_each_extra_a_project_may_want():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = set(pyproject["project"]["optional-dependencies"]) - TOOLING_EXTRAS
    listed = re.findall(r"^\| `([\w-]+)` \|", (DOCS / "installation.md").read_text(), re.M)
    assert sorted(listed) == sorted(extras)


# --- citations ----------------------------------------------------------------------


def test_every_citation_of_the_documentation_resolves():
    cited = 0
    for source in source_files():
        for page, anchor in CITATION.findall(source.read_text(encoding="utf-8")):
            target = DOCS / page
            assert target.exists(), f"{source}: docs/{page}"
            if anchor:
                assert anchor in anchors(target), f"{source}: docs/{page}#{anchor}"
            cited += 1
    assert cited > 100


def test_no_citation_of_the_external_specification_is_left():
    left = [
        f"{source.relative_to(ROOT)}:{number}"
        for source in source_files()
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1)
        if OLD_CITATION in line
    ]
    assert not left, "cite docs/protocol.md (or docs/demo.md) by anchor instead: " + str(left)


def test_the_protocol_has_a_section_for_each_rule():
    assert {
        "catalog",
        "catalog-entry",
        "affordances",
        "affordance-entry",
        "unavailable-entry",
        "compact",
        "constraints",
        "resolution",
        "versions",
        "unknown-references",
        "caching",
        "execution",
        "races",
        "negative-affordances",
        "mcp",
        "hal-forms",
        "openapi",
        "schemas",
    } <= anchors(DOCS / "protocol.md")


# --- the reference ------------------------------------------------------------------


def _cell(value: object) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def test_every_setting_has_a_row_with_its_default_and_its_check():
    page = (DOCS / "reference" / "settings.md").read_text()
    rows = {m[1]: m[0] for m in re.finditer(r"^\| \[`([A-Z_]+)`\]\(#[\w-]+\) \|.*$", page, re.M)}
    assert set(rows) == set(DEFAULTS)
    for name, default in DEFAULTS.items():
        assert f"| {_cell(default)} |" in rows[name], (name, rows[name])
        check = SETTING_CHECKS.get(name, "affordances.E001")
        assert f"`{check}`" in rows[name], (name, rows[name])


def test_every_system_check_is_listed_and_every_listed_one_exists():
    in_code = set()
    for module in (ROOT / "affordances").rglob("*.py"):
        in_code |= set(re.findall(r'"affordances\.([EW]\d{3})"', module.read_text()))
    page = (DOCS / "reference" / "checks.md").read_text()
    listed = set(re.findall(r"`(?:affordances\.)?([EW]\d{3})`", page))
    assert in_code and listed == in_code, (listed - in_code, in_code - listed)


def test_every_problem_code_is_listed():
    page = (DOCS / "reference" / "problems.md").read_text()
    listed = set(re.findall(r"^\| `([a-z_]+)` \| (?:\d+|any) \|", page, re.M))
    assert listed == {code.value for code in ProblemCode}


def test_every_management_command_is_listed():
    page = (DOCS / "reference" / "commands.md").read_text()
    commands = (ROOT / "affordances" / "management" / "commands").glob("[!_]*.py")
    for command in commands:
        assert f"`python manage.py {command.stem}" in page, command.stem


@pytest.mark.parametrize(
    "package", ["affordances", "affordances.rest", "affordances.mcp", "affordances.admin"]
)
def test_every_public_name_is_in_the_python_reference(package):
    page = (DOCS / "reference" / "api.md").read_text()
    documented = set(re.findall(r"^::: [\w.]+\.(\w+)$", page, re.M))
    documented |= set(re.findall(r"`(?:[\w.]+\.)?(\w+)`", page))
    missing = set(importlib.import_module(package).__all__) - documented
    assert not missing, f"{package}: {sorted(missing)}"


# --- code blocks ----------------------------------------------------------------------


# The pages an adoption test builds a project from (tests/test_adoption*.py), and files
# each must write.
ADOPTED = {
    "tutorial.md": {"desk/settings.py", "desk/urls.py", "helpdesk/models.py"},
    "howto/existing-project.md": {
        "library/settings.py",
        "library/urls.py",
        "members/models.py",
        "loans/models.py",
        "loans/inputs.py",
        "loans/filters.py",
    },
    "howto/claims-desk.md": {
        "insurance/settings.py",
        "insurance/urls.py",
        "accounts/models.py",
        "claims/models.py",
        "claims/rules.py",
        "claims/serializers.py",
    },
}


# What an adoption test runs besides the files: the tutorial's user and ticket (a
# ``manage.py shell`` snippet), its commands and the answers it shows
# (tests/test_adoption.py compares them with the project's).
SHELL_MARK = "# python manage.py shell"
ANSWER = 'title="the answer'


@pytest.mark.parametrize("page", sorted(ADOPTED))
def test_the_adopted_pages_are_whole_files_the_adoption_tests_write(page):
    blocks = FENCE.findall((DOCS / page).read_text())
    files = set()
    for _, language, info, code in blocks:
        first = code.lstrip().partition("\n")[0]
        if page == "tutorial.md" and (language == "sh" or ANSWER in info or first == SHELL_MARK):
            continue
        mark = FILE_MARK.match(first)
        assert language == "python" and not info.strip() and mark, (language, info, first)
        files.add(mark["path"])
    assert ADOPTED[page] <= files


@pytest.mark.parametrize(
    "page",
    sorted(p for p in (DOCS / "howto").glob("*.md") if str(p.relative_to(DOCS)) not in ADOPTED),
    ids=lambda p: p.stem,
)
def test_each_how_to_code_block_is_titled_an_excerpt(page):
    run = RUN_AS_SHOWN.get(page.name, set())
    for _, language, info, code in FENCE.findall(page.read_text()):
        title = re.search(r'title="([^"]*)"', info)
        if title and title[1] in run:
            continue
        assert 'title="excerpt' in info, f"{page.name}: ```{language}{info}\n{code[:80]}"


# How-to blocks a test runs as they are shown, by title, and the test.
RUN_AS_SHOWN = {
    # demo_tests/test_docs_mcp_recipe.py: the script, and what it prints.
    "mcp-hosts.md": {"client.py", "TOKEN=… python client.py, as support"},
}


# --- the site's search and its Python reference ------------------------------------------


def test_the_search_finds_a_check_by_its_short_id() -> None:
    plugins = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["plugins"]
    (search,) = [p["search"] for p in plugins if isinstance(p, dict) and "search" in p]
    words = re.split(search["separator"], "affordances.E044 (mcp-remote 0.15.1)")
    assert {"affordances", "E044", "mcp", "remote", "0.15.1"} <= set(words)
    # Each check is a heading: a search result of its own, ranked by its title.
    page = (DOCS / "reference" / "checks.md").read_text()
    listed = set(re.findall(r"`(?:affordances\.)?([EW]\d{3})`", page))
    headed = set(
        re.findall(
            r"`(?:affordances\.)?([EW]\d{3})`", "\n".join(re.findall(r"^### .*$", page, re.M))
        )
    )
    assert listed == headed, listed - headed


def test_no_sphinx_role_is_left_in_the_rendered_docstrings() -> None:
    """docs/extensions/rst_roles.py turns the docstrings' roles into Markdown for the
    Python reference; a role it does not know would show as raw text there."""
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("rst_roles", DOCS / "extensions" / "rst_roles.py")
    assert spec is not None and spec.loader is not None
    rst_roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rst_roles)
    left = []
    for source in sorted((ROOT / "affordances").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                docstring = ast.get_docstring(node)
                if docstring:
                    rendered = rst_roles.fenced(rst_roles.ROLE.sub(rst_roles.markdown, docstring))
                    left += [f"{source.name}: {m}" for m in re.findall(r":\w+:`[^`]*`", rendered)]
    assert not left, left
