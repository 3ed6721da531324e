"""The layout diagram of docs/explanation/architecture.md, generated from the code.

The layers are the import contract's (``pyproject.toml``, the package's layers
contract); an arrow joins two layers when grimp finds an import between them (as
``lint-imports`` does, deferred imports included). ``python -m tests.architecture
--write`` rewrites the diagram in the page; ``tests/test_layers.py`` fails while the
page's diagram is not the code's.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections import Counter
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "explanation" / "architecture.md"
BEGIN = "<!-- diagram: python -m tests.architecture --write -->"
END = "<!-- end of diagram -->"


def layers() -> list[list[str]]:
    """The package contract's layers, top first, each a list of module names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for contract in project["tool"]["importlinter"]["contracts"]:
        if contract.get("containers") == ["affordances"] and contract["type"] == "layers":
            return [
                [name for name in re.split(r"[\s:|]+", layer) if name]
                for layer in contract["layers"]
            ]
    raise LookupError("no layers contract for affordances in pyproject.toml")


def _label(modules: list[str]) -> str:
    lines, line = [], ""
    for name in modules:
        if line and len(line) + len(name) > 40:
            lines.append(line)
            line = ""
        line = f"{line} {name}".strip()
    lines.append(line)
    return "<br/>".join(lines)


def diagram() -> str:
    """A Mermaid flowchart: one node per layer, an arrow per pair of layers that import."""
    stack = layers()
    where = {name: index for index, layer in enumerate(stack) for name in layer}
    graph = grimp.build_graph("affordances")
    crossings: Counter[tuple[int, int]] = Counter()
    for module in graph.modules:
        parts = module.split(".")
        if len(parts) < 2 or parts[1] not in where:
            continue
        for imported in graph.find_modules_directly_imported_by(module):
            other = imported.split(".")
            if len(other) >= 2 and other[1] in where and other[1] != parts[1]:
                crossings[where[parts[1]], where[other[1]]] += 1
    lines = ["```mermaid", "flowchart TD"]
    for index, layer in enumerate(stack):
        lines.append(f'    L{index}["{_label(layer)}"]')
    for source, target in sorted(crossings):
        if source != target:
            lines.append(f"    L{source} --> L{target}")
    lines.append("```")
    return "\n".join(lines)


def page_with_diagram(text: str) -> str:
    before, rest = text.split(BEGIN, 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n\n{diagram()}\n\n{END}{after}"


if __name__ == "__main__":
    current = PAGE.read_text()
    wanted = page_with_diagram(current)
    if "--write" in sys.argv:
        PAGE.write_text(wanted)
    else:
        sys.exit(0 if wanted == current else "the page's diagram is stale: --write")
