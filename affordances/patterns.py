"""Regular expressions the app runs or publishes, refused when they can backtrack.

A ``pattern`` in an input schema is run by the server (jsonschema and DRF call
``re.search``) and by every client that validates before sending (Ajv and other
ECMAScript engines): both are backtracking engines, where a pattern such as
``^[^\\0]*[^ \\0][^\\0]*$`` takes time quadratic in the input's length — one request of a
few hundred kilobytes holds a worker for seconds. A linear-time engine on the server
(RE2) would not protect the clients that read the same pattern, so the rule is on the
pattern itself: :func:`backtracking_risk` finds the shapes that make a backtracking
engine super-linear, and the system check ``affordances.E017`` refuses a declared
pattern that has one.

The analysis is conservative (it may refuse a pattern that happens to be safe; anchor
it, or make the classes of adjacent repeats disjoint):

- a repeat inside a repeat (``(a+)+``, ``(a*)*``, ``(\\w+\\s?)*``);
- an unbounded repeat that can hand characters to a later unbounded repeat through
  items that also take them (``\\d+\\d*``, ``[^\\0]*[^ \\0][^\\0]*``, ``.*x.*``);
- an unbounded repeat of alternatives that can start alike (``(a|ab)*``);
- an unbounded repeat in a pattern not anchored at its start (``^`` or ``\\A``): the
  search would retry it from every position.

Character classes are compared on a probe alphabet (ASCII and the non-ASCII characters
that usually differ between classes), not symbolically.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

# Python's own parser: the tree the engine runs, so what is analysed is what is matched.
from affordances.caches import cached
from affordances.compat import regex

__all__ = ["backtracking_risk", "is_anchored", "patterns_in"]

_C = regex.constants
UNBOUNDED = _C.MAXREPEAT
_REPEATS = (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", _C.MAX_REPEAT))

# ASCII, and characters that Python's and ECMAScript's classes treat differently or that
# input validation cares about (NBSP, NEL, line/paragraph separators, wide spaces,
# non-ASCII letters and digits, an astral character).
_PROBES = "".join(chr(code) for code in range(128)) + (
    "\u0085\u00a0\u00e9\u00df\u0662\u1680\u2000\u2028\u2029\u3000\uff12\U0001f600"
)
_CATEGORIES = {
    _C.CATEGORY_DIGIT: re.compile(r"\d"),
    _C.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    _C.CATEGORY_SPACE: re.compile(r"\s"),
    _C.CATEGORY_NOT_SPACE: re.compile(r"\S"),
    _C.CATEGORY_WORD: re.compile(r"\w"),
    _C.CATEGORY_NOT_WORD: re.compile(r"\W"),
}
_Node = tuple[Any, Any]


def _in_class(items: Sequence[_Node], char: str) -> bool:
    negate = False
    found = False
    for op, arg in items:
        if op is _C.NEGATE:
            negate = True
        elif op is _C.LITERAL:
            found = found or ord(char) == arg
        elif op is _C.RANGE:
            found = found or arg[0] <= ord(char) <= arg[1]
        elif op is _C.CATEGORY:
            compiled = _CATEGORIES.get(arg)
            found = found or compiled is None or compiled.fullmatch(char) is not None
    return found != negate


def _one_char(op: Any, arg: Any, char: str) -> bool | None:
    """Whether a one-character item matches ``char``; None for anything longer."""
    if op is _C.LITERAL:
        return bool(ord(char) == arg)
    if op is _C.NOT_LITERAL:
        return bool(ord(char) != arg)
    if op is _C.ANY:
        return char != "\n"
    if op is _C.IN:
        return _in_class(arg, char)
    return None


def _chars(items: Sequence[_Node]) -> frozenset[str]:
    """Every probe character some position of ``items`` can match."""
    found: set[str] = set()
    for op, arg in items:
        if _one_char(op, arg, "a") is not None:
            found.update(c for c in _PROBES if _one_char(op, arg, c))
        elif op in _REPEATS:
            found |= _chars(arg[2])
        elif op is _C.SUBPATTERN:
            found |= _chars(arg[-1])
        elif op is _C.BRANCH:
            for branch in arg[1]:
                found |= _chars(branch)
        elif op is getattr(_C, "ATOMIC_GROUP", None):
            found |= _chars(arg)
    return frozenset(found)


def _first(items: Sequence[_Node]) -> tuple[frozenset[str], bool]:
    """The probe characters ``items`` can start with, and whether it can match ""."""
    found: set[str] = set()
    for op, arg in items:
        if _one_char(op, arg, "a") is not None:
            found.update(c for c in _PROBES if _one_char(op, arg, c))
            return frozenset(found), False
        if op in _REPEATS:
            inner, empty = _first(arg[2])
            found |= inner
            if arg[0] > 0 and not empty:
                return frozenset(found), False
        elif op is _C.SUBPATTERN:
            inner, empty = _first(arg[-1])
            found |= inner
            if not empty:
                return frozenset(found), False
        elif op is _C.BRANCH:
            empties = False
            for branch in arg[1]:
                inner, empty = _first(branch)
                found |= inner
                empties = empties or empty
            if not empties:
                return frozenset(found), False
        # Anchors, lookarounds and group references take no character.
    return frozenset(found), True


def _has_unbounded(items: Sequence[_Node]) -> bool:
    for op, arg in items:
        if op in _REPEATS and (arg[1] is UNBOUNDED or _has_unbounded(arg[2])):
            return True
        if any(_has_unbounded(child) for child in _children(op, arg)):
            return True
    return False


def _variable_chars(items: Sequence[_Node]) -> frozenset[str]:
    """The characters the parts of ``items`` whose length varies can take: what lets an
    enclosing repeat split one run of characters between its iterations in many ways."""
    found: set[str] = set()
    for op, arg in items:
        if op in _REPEATS:
            low, high, body = arg
            found |= _chars(body) if low != high else _variable_chars(body)
        elif op is _C.BRANCH and any(_first(branch)[1] for branch in arg[1]):
            found |= _chars([(op, arg)])
        else:
            for child in _children(op, arg):
                found |= _variable_chars(child)
    return frozenset(found)


def _children(op: Any, arg: Any) -> Iterator[Sequence[_Node]]:
    if op is _C.SUBPATTERN:
        yield arg[-1]
    elif op is _C.BRANCH:
        yield from arg[1]
    elif op in (_C.ASSERT, _C.ASSERT_NOT):
        yield arg[1]
    elif op is getattr(_C, "ATOMIC_GROUP", None):
        yield arg


def _sequence_risk(items: Sequence[_Node]) -> str | None:
    for index, (op, arg) in enumerate(items):
        for child in _children(op, arg):
            risk = _sequence_risk(child)
            if risk:
                return risk
        if op not in _REPEATS:
            continue
        _low, high, body = arg
        risk = _sequence_risk(body)
        if risk:
            return risk
        if high is not UNBOUNDED and high <= 1:
            continue
        first, empty = _first(body)
        if _variable_chars(body) & first or (high is UNBOUNDED and empty):
            return "a repeat inside a repeat"
        if high is UNBOUNDED and _overlapping_branches(body):
            return "a repeat of alternatives that can start alike"
        if high is UNBOUNDED and _walk(_chars(body), items[index + 1 :]) == _FOUND:
            return "two unbounded repeats can take the same characters"
    return None


def _overlapping_branches(body: Sequence[_Node]) -> bool:
    for op, arg in body:
        if op is _C.SUBPATTERN:
            return _overlapping_branches(arg[-1])
        if op is _C.BRANCH:
            seen: set[str] = set()
            for branch in arg[1]:
                first = _first(branch)[0]
                if seen & first:
                    return True
                seen |= first
    return False


_FOUND, _BLOCKED, _PASSED = "found", "blocked", "passed"


def _walk(taken: frozenset[str], items: Sequence[_Node]) -> str:
    """Follow ``items`` on characters from ``taken`` only: ``found`` when that reaches an
    unbounded repeat that also takes them (the two can share one run), ``blocked`` when
    an item needs another character, ``passed`` when the items can be crossed."""
    for op, arg in items:
        if _one_char(op, arg, "a") is not None:
            if not any(_one_char(op, arg, char) for char in taken):
                return _BLOCKED
        elif op in _REPEATS:
            low, high, body = arg
            if high is UNBOUNDED and _chars(body) & taken:
                return _FOUND
            inner = _walk(taken, body)
            if inner == _FOUND or (inner == _BLOCKED and low > 0):
                return inner
        elif op is _C.SUBPATTERN or op is getattr(_C, "ATOMIC_GROUP", None):
            inner = _walk(taken, arg[-1] if op is _C.SUBPATTERN else arg)
            if inner != _PASSED:
                return inner
        elif op is _C.BRANCH:
            outcomes = {_walk(taken, branch) for branch in arg[1]}
            if _FOUND in outcomes:
                return _FOUND
            if outcomes == {_BLOCKED}:
                return _BLOCKED
        elif op is _C.AT and arg in (_C.AT_END, _C.AT_END_STRING):
            return _BLOCKED
        # Other anchors and lookarounds take no character.
    return _PASSED


# Declared patterns only (a few per operation), never request input: 256 entries of a
# pattern and a short sentence, some tens of kB at most.
@cached("backtracking risks", keys="declared pattern", max_entries=256)
def backtracking_risk(pattern: str) -> str | None:
    """Why ``pattern`` may take super-linear time in a backtracking engine, or None."""
    try:
        parsed = regex.parse(pattern)
    except re.error as exc:
        return f"not a regular expression ({exc})"
    items = list(parsed)
    risk = _sequence_risk(items)
    if risk:
        return risk
    if not _starts_anchored(items) and _has_unbounded(items):
        return "an unbounded repeat in a pattern not anchored with ^"
    return None


def _starts_anchored(items: Sequence[_Node]) -> bool:
    return bool(items) and items[0] in ((_C.AT, _C.AT_BEGINNING), (_C.AT, _C.AT_BEGINNING_STRING))


def is_anchored(pattern: str) -> bool:
    """Whether every match of ``pattern`` starts at the start (``^`` or ``\\A`` first, no
    alternative around it): searched or matched from the start, it takes the same."""
    try:
        return _starts_anchored(list(regex.parse(pattern)))
    except re.error:
        return False


def patterns_in(schema: Any) -> Iterator[str]:
    """Every ``pattern`` a JSON Schema (or any JSON document) holds, depth first."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "pattern" and isinstance(value, str):
                yield value
            else:
                yield from patterns_in(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from patterns_in(item)
