"""A griffe extension for the Python API page: the docstrings' reStructuredText as Markdown.

The library's docstrings cite other names the Sphinx way (``:func:`perform```,
``:class:`~affordances.rest.ResourceRouter```), which reads well in an editor and in
``help()``; mkdocstrings renders docstrings as Markdown, where the role would show as
text. Each role becomes a code span of the name as Sphinx would display it (``~`` keeps
the last part), a link when the page documents that name (``::: path`` in
docs/reference/api.md); a link to a name the page does not document would fail the
strict build. A literal block (a paragraph ending ``::``, a blank line, the code) becomes
a fenced Python block.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):`(?P<target>[^`]+)`")
API_PAGE = Path(__file__).resolve().parents[1] / "reference" / "api.md"
DOCUMENTED = frozenset(re.findall(r"^::: ([\w.]+)", API_PAGE.read_text(), re.M))


def markdown(match: re.Match[str]) -> str:
    path = match["target"].removeprefix("~")
    shown = path.rsplit(".", 1)[-1] if match["target"].startswith("~") else path
    return f"[`{shown}`][{path}]" if path in DOCUMENTED else f"`{shown}`"


def fenced(text: str) -> str:
    """``text`` with each literal block fenced: the block is the indented lines after
    the ``::`` (or, not indented, the lines up to the next blank one)."""
    lines, out = text.splitlines(), []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not (line.endswith("::") and i + 2 < len(lines) and not lines[i + 1].strip()):
            out.append(line)
            i += 1
            continue
        out += [line[:-1], ""]
        i += 2
        indented = lines[i].startswith(" ")
        block = []
        while i < len(lines) and (
            (not lines[i].strip() or lines[i].startswith(" ")) if indented else lines[i].strip()
        ):
            block.append(lines[i])
            i += 1
        out += ["```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""]
    return "\n".join(out)


class RstRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fenced(ROLE.sub(markdown, obj.docstring.value))
