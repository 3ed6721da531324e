"""The standard library's regular-expression parser (``re._parser``, ``re._constants``).

:mod:`affordances.patterns` judges a declared pattern by the tree Python's engine runs,
so what is analysed is what is matched. That tree is only reachable through these
modules: public as ``sre_parse``/``sre_constants`` before Python 3.11, which still
import them with a ``DeprecationWarning``; no public API exposes a parsed pattern.
"""

from __future__ import annotations

from re import _constants as constants  # type: ignore[attr-defined]
from re import _parser as parser  # type: ignore[attr-defined]
from typing import Any

__all__ = ["constants", "parse"]


def parse(pattern: str) -> Any:
    """The parsed pattern (a ``SubPattern``: a list of ``(opcode, argument)`` nodes);
    ``re.error`` when it is not a regular expression."""
    return parser.parse(pattern)
