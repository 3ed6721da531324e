"""A backtracking regular-expression matcher that counts its steps.

Python's ``re`` and ECMAScript engines (V8's Irregexp, what Ajv runs) are backtracking
engines: how long a pattern takes on an input is the number of steps such an engine
takes. Wall-clock time is noise on a shared CI machine; steps are exact and repeatable.
This interprets the pattern as parsed by Python (``re._parser``) the textbook way —
every start position of ``search``, greedy repeats tried longest first, alternatives in
order — and counts one step per character test and per continuation tried.

It is a test oracle, independent of :mod:`affordances.patterns` (the static check).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from re import _constants as C
from re import _parser as parser
from typing import Any

UNBOUNDED = C.MAXREPEAT
_CATEGORIES = {
    C.CATEGORY_DIGIT: re.compile(r"\d"),
    C.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    C.CATEGORY_SPACE: re.compile(r"\s"),
    C.CATEGORY_NOT_SPACE: re.compile(r"\S"),
    C.CATEGORY_WORD: re.compile(r"\w"),
    C.CATEGORY_NOT_WORD: re.compile(r"\W"),
}


class TooManySteps(Exception):
    """The match went past the budget: super-linear for the sizes tried."""


def _class_has(items: Sequence[Any], char: str) -> bool:
    negate, found = False, False
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            found |= ord(char) == arg
        elif op is C.RANGE:
            found |= arg[0] <= ord(char) <= arg[1]
        elif op is C.CATEGORY:
            found |= _CATEGORIES[arg].fullmatch(char) is not None
        else:
            raise NotImplementedError(op)
    return found != negate


def _single(op: Any, arg: Any) -> Callable[[str], bool] | None:
    if op is C.LITERAL:
        return lambda c: ord(c) == arg
    if op is C.NOT_LITERAL:
        return lambda c: ord(c) != arg
    if op is C.ANY:
        return lambda c: c != "\n"
    if op is C.IN:
        return lambda c: _class_has(arg, c)
    return None


# Past this many steps a run is super-linear for the sizes worst_growth tries (256
# characters and a few more): the linear patterns the tests measure take at most about
# 18,000 steps there, the quadratic ones about 100,000; an exponential one never stops
# short of the budget, so each step of it is paid for (2,000,000 took seconds a pattern).
BUDGET = 500_000


class Matcher:
    def __init__(self, pattern: str, *, budget: int = BUDGET) -> None:
        self.items = list(parser.parse(pattern))
        self.budget = budget
        self.steps = 0
        self.text = ""

    def _step(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise TooManySteps

    def search(self, text: str) -> bool:
        """``re.search`` semantics; ``self.steps`` holds the count afterwards."""
        self.steps = 0
        self.text = text
        return any(
            self._seq(self.items, 0, start, lambda _end: True) for start in range(len(text) + 1)
        )

    def _seq(self, items: Sequence[Any], index: int, pos: int, then: Callable[[int], bool]) -> bool:
        self._step()
        if index == len(items):
            return then(pos)
        op, arg = items[index]

        def rest(end: int) -> bool:
            return self._seq(items, index + 1, end, then)

        single = _single(op, arg)
        if single is not None:
            self._step()
            return pos < len(self.text) and single(self.text[pos]) and rest(pos + 1)
        if op is C.AT:
            return self._at(arg, pos) and rest(pos)
        if op is C.SUBPATTERN:
            return self._seq(arg[-1], 0, pos, rest)
        if op is C.BRANCH:
            return any(self._seq(branch, 0, pos, rest) for branch in arg[1])
        if op in (C.ASSERT, C.ASSERT_NOT) and arg[0] == 1:  # lookahead
            found = self._seq(arg[1], 0, pos, lambda _end: True)
            return found == (op is C.ASSERT) and rest(pos)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            low, high, body = arg
            greedy = op is C.MAX_REPEAT
            inner = _single(*body[0]) if len(body) == 1 else None
            if inner is not None:
                return self._repeat_one(inner, low, high, greedy, pos, rest)
            return self._repeat(body, low, high, greedy, 0, pos, rest)
        raise NotImplementedError(op)

    def _repeat_one(self, inner, low, high, greedy, pos, rest) -> bool:  # type: ignore[no-untyped-def]
        limit = len(self.text) - pos if high is UNBOUNDED else min(high, len(self.text) - pos)
        count = 0
        while count < limit:
            self._step()
            if not inner(self.text[pos + count]):
                break
            count += 1
        if count < low:
            return False
        order = range(count, low - 1, -1) if greedy else range(low, count + 1)
        return any(rest(pos + taken) for taken in order)

    def _repeat(self, body, low, high, greedy, done, pos, rest) -> bool:  # type: ignore[no-untyped-def]
        def again(end: int) -> bool:
            # An iteration that took nothing ends the repeat (as every engine does).
            return end != pos and self._repeat(body, low, high, greedy, done + 1, end, rest)

        can_more = high is UNBOUNDED or done < high
        if done < low:
            return self._seq(body, 0, pos, again)
        if greedy:
            return (can_more and self._seq(body, 0, pos, again)) or rest(pos)
        return rest(pos) or (can_more and self._seq(body, 0, pos, again))

    def _at(self, where: Any, pos: int) -> bool:
        self._step()
        if where in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
            return pos == 0
        if where == C.AT_END:
            size = len(self.text)
            return pos == size or (pos == size - 1 and self.text[pos] == "\n")
        if where == C.AT_END_STRING:
            return pos == len(self.text)
        raise NotImplementedError(where)


def steps(pattern: str, text: str, *, budget: int = BUDGET) -> tuple[bool, int]:
    """Whether ``pattern`` is found in ``text``, and how many steps that took."""
    matcher = Matcher(pattern, budget=budget)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 100_000))
    try:
        matched = matcher.search(text)
    finally:
        sys.setrecursionlimit(old)
    # The oracle must agree with the engine it stands for.
    assert matched == (re.search(pattern, text) is not None), (pattern, text[:40])
    return matched, matcher.steps


# The classic shapes: a long run of characters some repeat takes, then a tail that fails.
_RUNS = "aZ09 \t-_.Q\u00e9\u2028"
_TAILS = ("\x00", "!", "\n", " ", "\u2028", "a", "0", "\n!", "x\x00")


def _prefixes(pattern: str) -> list[str]:
    """The literal characters a pattern must start with (``Q-`` of ``^Q-[0-9]+$``)."""
    prefix = ""
    for op, arg in parser.parse(pattern):
        if op is C.AT:
            continue
        if op is not C.LITERAL:
            break
        prefix += chr(arg)
    return sorted({"", prefix})


def _literals(items: Sequence[Any]) -> set[str]:
    """Every literal character of a parsed pattern (a run of ``x`` for ``.*x.*``)."""
    found: set[str] = set()
    for op, arg in items:
        if op is C.LITERAL:
            found.add(chr(arg))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            found |= _literals(arg[2])
        elif op is C.SUBPATTERN:
            found |= _literals(arg[-1])
        elif op is C.BRANCH:
            for branch in arg[1]:
                found |= _literals(branch)
    return found


def worst_growth(pattern: str, *, small: int = 64, large: int = 256) -> tuple[float, str]:
    """The largest ratio steps(large) / steps(small) over adversarial inputs, with the
    input shape that gave it: about large/small for a linear pattern, its square for a
    quadratic one. A run past the step budget counts as infinite growth."""
    worst, shape = 0.0, ""
    for prefix in _prefixes(pattern):
        for run in sorted(set(_RUNS) | _literals(parser.parse(pattern))):
            for tail in _TAILS:
                try:
                    found_few, few = steps(pattern, prefix + run * small + tail)
                    found_many, many = steps(pattern, prefix + run * large + tail)
                except TooManySteps:
                    return float("inf"), f"{prefix!r} + {run!r}*n + {tail!r}"
                if found_few != found_many:
                    # A bounded repeat ({1,255}) matches the short input and refuses the
                    # long one: that compares two kinds of work, not two sizes of one.
                    continue
                ratio = many / few
                if ratio > worst:
                    worst, shape = ratio, f"{prefix!r} + {run!r}*n + {tail!r}"
    return worst, shape
