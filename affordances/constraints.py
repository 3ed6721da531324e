"""The constraint vocabulary: what a constraint may say of an operation's inputs.

A constraint (``@operation(constraints=…)``) narrows the input schema for one object and
caller: an enum subset, tighter bounds, a pattern, more required inputs. This module is
the one place that says which keywords a constraint may use and on which kinds of input
(:data:`CONSTRAINT_KEYWORDS`), which it may not because some face could not show them
(:data:`REFUSED_KEYWORDS`), how a keyword merges with the input's own schema (the tighter
bound wins, :func:`narrow_property`), and that a constraint only narrows
(:func:`assert_narrows`). Every face renders from it — the affordance entry, OpenAPI,
HAL-FORMS, OPTIONS and the browsable API, the admin (:mod:`affordances.inputs`) — and
execution enforces it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

from affordances.patterns import backtracking_risk, is_anchored

__all__ = [
    "CONSTRAINT_KEYWORDS",
    "REFUSED_KEYWORDS",
    "ConstraintNotShown",
    "ConstraintWidens",
    "assert_narrows",
    "conjoined_pattern",
    "format_bounds",
    "inclusive_bounds",
    "input_kind",
    "moment",
    "narrow_property",
    "outside_format_bound",
]


class ConstraintWidens(Exception):
    """A constraint that would admit something the catalog's schema refuses, or that is
    no narrowing at all (a keyword outside the vocabulary, a malformed value)."""


class ConstraintNotShown(ConstraintWidens):
    """A constraint keyword some face could not show for its input: a form would offer
    what execution refuses. Refused like a widening one (the operation is unavailable,
    reason ``misconfigured``); the system check reports it as ``affordances.E026``."""


# Kinds of input (:func:`input_kind`), each with the keywords every face can show for it.
_EVERY_KIND = frozenset({"choice", "number", "text", "date", "date-time", "other"})
_MOMENTS = frozenset({"date", "date-time"})

# What a constraint may say of one input, and of which kinds of input. Each face renders
# every one of them (the forms through :mod:`affordances.inputs`):
#
# - ``enum``, ``const``: the offered choices (HAL-FORMS ``options.inline``, a choice field
#   in the admin and browsable forms; ``const`` is one option), ``enum``/``const`` in
#   the JSON Schema faces (OpenAPI 3.0: ``enum`` of one);
# - ``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``: on an integer
#   or a decimal (an input with a step), the tightest inclusive bounds on that step
#   (HAL-FORMS ``min``/``max``, the forms' ``min_value``/``max_value``): below an
#   exclusive 30 with a step of 0.01, at most 29.99 — exact, as only steps are taken;
# - ``minLength``, ``maxLength``, ``pattern``: on text, HAL-FORMS ``minLength``,
#   ``maxLength`` and ``regex`` (with the input's own pattern: both, in one pattern,
#   :func:`conjoined_pattern`), the forms' ``min_length``, ``max_length`` and a
#   ``RegexValidator``; JSON Schema adds the pattern under ``allOf``;
# - ``formatMinimum``, ``formatMaximum``: on a date (``YYYY-MM-DD``) or a date-time (an
#   RFC 3339 date-time, with its offset), the earliest and latest value, inclusive — the
#   keyword pair ajv-formats reads beside ``format``. HAL-FORMS ``min``/``max``, the
#   ``min``/``max`` of the admin's and browsable API's date inputs, OPTIONS' ``min_value``/
#   ``max_value``; OpenAPI 3.0 (no unknown keywords) writes them ``x-formatMinimum``/
#   ``x-formatMaximum``. JSON Schema validators ignore them without a format plug-in, so
#   execution compares the parsed values itself (:func:`outside_format_bound`).
#
# Besides: ``required`` (at the top, beside ``properties``), the inputs it makes required.
CONSTRAINT_KEYWORDS: dict[str, frozenset[str]] = {
    "enum": _EVERY_KIND,
    "const": _EVERY_KIND,
    "minimum": frozenset({"number"}),
    "maximum": frozenset({"number"}),
    "exclusiveMinimum": frozenset({"number"}),
    "exclusiveMaximum": frozenset({"number"}),
    "minLength": frozenset({"text"}),
    "maxLength": frozenset({"text"}),
    "pattern": frozenset({"text"}),
    "formatMinimum": _MOMENTS,
    "formatMaximum": _MOMENTS,
}
# Narrowing JSON Schema keywords that some face cannot show, and why.
REFUSED_KEYWORDS: dict[str, str] = {
    "multipleOf": "a form's step (HTML, HAL-FORMS, Django) counts from the minimum, "
    "JSON Schema's multipleOf from zero: no form could show it",
    "minItems": "no input is a list: HAL-FORMS properties and the admin's and browsable "
    "API's fields take one value each",
    "maxItems": "no input is a list: HAL-FORMS properties and the admin's and browsable "
    "API's fields take one value each",
}
# How the refusals name the kinds: one input, and the inputs a keyword is shown on.
_KIND_WORDS = {
    "choice": ("a choice", "choices"),
    "number": ("an integer or a decimal", "integers and decimals"),
    "text": ("text", "text"),
    "date": ("a date", "dates"),
    "date-time": ("a date-time", "date-times"),
    "other": ("a boolean, a time or a number without a step", "every input"),
}
_UPPER = {"maximum": False, "exclusiveMaximum": True}
_LOWER = {"minimum": False, "exclusiveMinimum": True}
# Strings with a format no face takes a length or a pattern for (a date picker).
_TIME_FORMATS = frozenset({"date", "date-time", "time", "duration"})


def _value_branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """An input's schemas of one type each: the schema itself, or its ``anyOf`` branches
    but ``null`` (a nullable input, a decimal)."""
    if isinstance(schema.get("anyOf"), list):
        return [b for b in schema["anyOf"] if isinstance(b, Mapping) and b.get("type") != "null"]
    return [schema]


def input_kind(schema: Mapping[str, Any]) -> str:
    """What an input's schema describes, as far as constraints go: ``choice`` (it lists
    its values), ``number`` (an integer, or a decimal: a number with a ``multipleOf``
    step), ``text`` (a string that is no date or time), ``date``, ``date-time`` (a
    string of that format), or ``other`` (a boolean, a time, a number without a step…)."""
    branches = _value_branches(schema)
    if any(key in node for node in (schema, *branches) for key in ("enum", "const")):
        return "choice"
    types = {branch.get("type") for branch in branches}
    if types == {"integer"}:
        return "number"
    numbers = [branch for branch in branches if branch.get("type") == "number"]
    if numbers and types <= {"number", "string"} and all("multipleOf" in n for n in numbers):
        return "number"  # a decimal: the number, or its plain decimal spelling
    formats = {branch.get("format") for branch in branches}
    if types == {"string"} and len(formats) == 1 and formats <= _MOMENTS:
        return str(formats.pop())
    if types == {"string"} and not formats & _TIME_FORMATS:
        return "text"
    return "other"


_FULL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# RFC 3339's date-time: a full date, ``T``, a time with its offset (``Z`` or ±hh:mm).
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def moment(value: Any, kind: str | None = None) -> date | datetime | None:
    """A ``formatMinimum``/``formatMaximum`` value, or a value it bounds, parsed: a date
    (``YYYY-MM-DD``) or an aware date-time (RFC 3339). ``kind``: ``date`` or
    ``date-time`` to take only that one; None: whichever it spells. None: neither."""
    if not isinstance(value, str):
        return None
    try:
        if kind != "date-time" and _FULL_DATE.fullmatch(value):
            return date.fromisoformat(value)
        if kind != "date" and _DATE_TIME.fullmatch(value):
            return datetime.fromisoformat(value.upper())
    except ValueError:  # 2025-02-30, 25:00
        return None
    return None


def _comparable(value: Any, kind: str) -> date | datetime | None:
    """A value an input took, to compare with a bound of ``kind``: a date-time given
    without an offset is one of the current time zone (as DRF and Django read it)."""
    if kind == "date-time" and isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.upper())
        except ValueError:
            return None
        if parsed.tzinfo is None:
            from django.utils import timezone

            parsed = timezone.make_aware(parsed, timezone.get_current_timezone())
        return parsed
    return moment(value, kind)


def outside_format_bound(value: Any, bound: Any, *, upper: bool, kind: str | None = None) -> bool:
    """Whether ``value`` (a date or date-time as JSON spells it) is past ``bound``, a
    ``formatMaximum`` (``upper``) or a ``formatMinimum``, inclusive: how execution (and
    every form's offered choices) enforce them — JSON Schema validators ignore these
    keywords without a format plug-in. ``kind``: the input's format; None: the bound's.
    A value or bound that does not parse is no date: the input's own format refuses it."""
    limit = moment(bound, kind)
    if limit is None:
        return False
    found = _comparable(value, "date-time" if isinstance(limit, datetime) else "date")
    if found is None:
        return False
    return found > limit if upper else found < limit


def format_bounds(schemas: list[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """The tightest ``formatMinimum`` and ``formatMaximum`` of ``schemas`` (an input's own
    and its constraint's), as spelled: what a form states as its ``min`` and ``max``."""
    return _tightest_moment(schemas, "formatMinimum"), _tightest_moment(schemas, "formatMaximum")


def _tightest_moment(schemas: list[Mapping[str, Any]], key: str) -> str | None:
    found = [(parsed, s[key]) for s in schemas if (parsed := moment(s.get(key))) is not None]
    if not found:
        return None
    kinds = {type(parsed) for parsed, _ in found}
    if len(kinds) > 1:  # a date beside a date-time: no face compares them; the first
        return str(found[0][1])
    pick = max if key == "formatMinimum" else min
    return str(pick(found, key=lambda item: item[0])[1])


def _decimal(value: Any) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return False
    return _decimal(value).is_finite()


def _tightest(
    schema: Mapping[str, Any], keys: Mapping[str, bool], *, upper: bool
) -> tuple[Decimal, bool] | None:
    """The tightest of ``schema``'s bounds among ``keys``: (value, exclusive)."""
    bounds = [
        (_decimal(schema[key]), exclusive)
        for key, exclusive in keys.items()
        if key in schema and _is_number(schema[key])
    ]
    if not bounds:
        return None
    if upper:  # the lowest; at one value, the exclusive one
        return min(bounds, key=lambda bound: (bound[0], not bound[1]))
    return max(bounds, key=lambda bound: (bound[0], bound[1]))


def inclusive_bounds(
    schemas: list[Mapping[str, Any]], step: Decimal | None
) -> tuple[Decimal | None, Decimal | None]:
    """The inclusive (minimum, maximum) that every schema's bounds together leave to an
    input taking multiples of ``step``: what a form states. Exact — below an exclusive
    30 on a step of 0.01 only 29.99 and less are taken — so exclusive bounds need a step
    (the vocabulary allows them on integers and decimals only)."""
    lows = [bound for s in schemas if (bound := _tightest(s, _LOWER, upper=False))]
    highs = [bound for s in schemas if (bound := _tightest(s, _UPPER, upper=True))]
    low = max(lows, key=lambda bound: (bound[0], bound[1])) if lows else None
    high = min(highs, key=lambda bound: (bound[0], not bound[1])) if highs else None
    return _on_step(low, step, up=True), _on_step(high, step, up=False)


def _on_step(
    bound: tuple[Decimal, bool] | None, step: Decimal | None, *, up: bool
) -> Decimal | None:
    if bound is None:
        return None
    value, exclusive = bound
    if step is None:  # inclusive: the vocabulary has exclusive bounds on steps only
        return value
    steps = (value / step).to_integral_value(rounding=ROUND_CEILING if up else ROUND_FLOOR)
    if exclusive and steps * step == value:
        steps += 1 if up else -1
    result = steps * step
    try:
        return result.quantize(step)  # written to the step: 29.99, 30.00, 2
    except InvalidOperation:  # beyond the context's precision: as computed
        return result


_ANY_CHARACTER = r"[\s\S]"


def conjoined_pattern(patterns: list[str]) -> str | None:
    """One pattern that a string matches when it matches each of ``patterns`` (searched,
    as JSON Schema and ``RegexValidator`` do): the one, or lookaheads from the start for
    each, then the whole string. Anchored, each pattern inside a lookahead of its own:
    as linear as the patterns themselves. What HAL-FORMS' single ``regex`` shows of an
    input's own pattern and a constraint's."""
    unique = list(dict.fromkeys(patterns))
    if len(unique) <= 1:
        return unique[0] if unique else None
    lookaheads = "".join(
        f"(?={p})" if is_anchored(p) else f"(?={_ANY_CHARACTER}*?(?:{p}))" for p in unique
    )
    return f"^{lookaheads}{_ANY_CHARACTER}*$"


def assert_narrows(base: Mapping[str, Any], constraint: Mapping[str, Any]) -> None:
    """Refuse a constraint that could admit a value the base schema refuses, that is not
    in the vocabulary (:class:`ConstraintWidens`), or that some face could not show for
    its input (:class:`ConstraintNotShown`)."""
    if not isinstance(constraint, Mapping):
        raise ConstraintWidens("constraints must be an object")
    unknown = set(constraint) - {"properties", "required"}
    if unknown:
        raise ConstraintWidens(f"constraints may only use properties/required, not {unknown}")
    base_properties = base.get("properties", {})
    required = constraint.get("required", [])
    if not isinstance(required, list | tuple):
        raise ConstraintWidens("required must be a list of input names")
    for name in required:
        if name not in base_properties:
            raise ConstraintWidens(f"required {name!r} is not an input of the operation")
    properties = constraint.get("properties", {})
    if not isinstance(properties, Mapping):
        raise ConstraintWidens("properties must be an object")
    for name, narrowed in properties.items():
        if name not in base_properties:
            raise ConstraintWidens(f"{name!r} is not an input of the operation")
        if not isinstance(narrowed, Mapping):
            raise ConstraintWidens(f"{name} must be narrowed by an object of keywords")
        _assert_property_narrows(name, base_properties[name], narrowed)


def _assert_property_narrows(
    name: str, base: Mapping[str, Any], narrowed: Mapping[str, Any]
) -> None:
    kind = input_kind(base)
    for key, value in narrowed.items():
        if key in REFUSED_KEYWORDS:
            raise ConstraintNotShown(f"{name}.{key}: {REFUSED_KEYWORDS[key]}")
        if key not in CONSTRAINT_KEYWORDS:
            raise ConstraintWidens(f"{name}.{key} is not a narrowing keyword")
        if kind not in CONSTRAINT_KEYWORDS[key]:
            shown = " and ".join(_KIND_WORDS[k][1] for k in sorted(CONSTRAINT_KEYWORDS[key]))
            raise ConstraintNotShown(
                f"{name}.{key}: no face shows it on {_KIND_WORDS[kind][0]}, only on {shown}"
            )
        if key in ("enum", "const"):
            _assert_values_narrow(name, key, base, value)
        elif key in _UPPER or key in _LOWER:
            _assert_bound_narrows(name, key, base, value)
        elif key in ("minLength", "maxLength"):
            _assert_length_narrows(name, key, base, value)
        elif key in ("formatMinimum", "formatMaximum"):
            _assert_moment_narrows(name, key, base, value, kind)
        else:  # pattern
            # An extra pattern is applied together with the catalog's (allOf): it narrows,
            # unless it could hold a worker (and a client) on a crafted string.
            risk = backtracking_risk(value) if isinstance(value, str) else "not a string"
            if risk:
                raise ConstraintWidens(f"{name}.pattern {value!r}: {risk}")


def _assert_values_narrow(name: str, key: str, base: Mapping[str, Any], value: Any) -> None:
    """Values among the input's own (when it lists them), of a JSON type it takes. Whether
    the input's field takes each is left to the faces: a form offers only those it does
    (:mod:`affordances.inputs`), execution refuses the others."""
    if key == "enum" and not isinstance(value, list | tuple):
        raise ConstraintWidens(f"{name}.enum must be a list of values")
    branches = _value_branches(base)
    listed = [node["enum"] for node in (base, *branches) if "enum" in node]
    types = sorted({str(branch["type"]) for branch in branches if "type" in branch})
    for item in value if key == "enum" else [value]:
        if any(item not in values for values in listed):
            raise ConstraintWidens(f"{name}.{key} adds {item!r}, not among the input's values")
        if types and not any(_of_type(item, kind) for kind in types):
            raise ConstraintWidens(f"{name}.{key} admits {item!r}, not of type {types}")


def _of_type(value: Any, kind: str) -> bool:
    """JSON Schema's ``type`` (checked per evaluated row: no validator is built for it)."""
    if kind == "boolean" or isinstance(value, bool):
        return kind == "boolean" and isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) or (_is_number(value) and _decimal(value) % 1 == 0)
    if kind == "number":
        return isinstance(value, int | float | Decimal)
    python = {"string": str, "array": list | tuple, "object": Mapping, "null": type(None)}
    return isinstance(value, python.get(kind, object))


def _assert_bound_narrows(name: str, key: str, base: Mapping[str, Any], value: Any) -> None:
    if not _is_number(value):
        raise ConstraintWidens(f"{name}.{key} must be a number, not {value!r}")
    upper = key in _UPPER
    mine = (_decimal(value), (_UPPER if upper else _LOWER)[key])
    for branch in _value_branches(base):
        theirs = _tightest(branch, _UPPER if upper else _LOWER, upper=upper)
        if theirs is None:
            continue
        # Looser: past the base's bound, or at it where the base excludes and this does not.
        past = mine[0] > theirs[0] if upper else mine[0] < theirs[0]
        if past or (mine[0] == theirs[0] and theirs[1] and not mine[1]):
            word = "exceeds" if upper else "is below"
            raise ConstraintWidens(f"{name}.{key} {value} {word} the input's bound {theirs[0]}")


def _assert_length_narrows(name: str, key: str, base: Mapping[str, Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConstraintWidens(f"{name}.{key} must be a non-negative integer, not {value!r}")
    for branch in _value_branches(base):
        if key in branch and (value > branch[key] if key == "maxLength" else value < branch[key]):
            word = "exceeds" if key == "maxLength" else "is below"
            raise ConstraintWidens(f"{name}.{key} {value} {word} the input's {branch[key]}")


def _assert_moment_narrows(
    name: str, key: str, base: Mapping[str, Any], value: Any, kind: str
) -> None:
    mine = moment(value, kind)
    if mine is None:
        spelled = "YYYY-MM-DD" if kind == "date" else "an RFC 3339 date-time with its offset"
        raise ConstraintWidens(f"{name}.{key} must be a {kind} ({spelled}), not {value!r}")
    upper = key == "formatMaximum"
    for branch in _value_branches(base):
        theirs = moment(branch.get(key), kind)
        if theirs is not None and (mine > theirs if upper else mine < theirs):
            word = "is after" if upper else "is before"
            raise ConstraintWidens(f"{name}.{key} {value} {word} the input's {branch[key]}")


def narrow_property(base: Mapping[str, Any], narrowed: Mapping[str, Any]) -> dict[str, Any]:
    """An input's schema narrowed by its constraint (one :func:`assert_narrows` passed):
    ``enum``/``const`` beside the input's own, on each branch of the input's type the
    tighter bound and length (one upper and one lower bound each; the later
    ``formatMinimum``, the earlier ``formatMaximum``), an extra pattern under ``allOf``.
    JSON Schema 2020-12; a copy."""
    merged = copy.deepcopy(dict(base))
    for key in ("enum", "const"):
        if key in narrowed:
            merged[key] = copy.deepcopy(narrowed[key])
    branches = merged["anyOf"] if isinstance(merged.get("anyOf"), list) else [merged]
    for branch in branches:
        kind = branch.get("type")
        if kind in ("integer", "number"):
            for keys, upper in ((_UPPER, True), (_LOWER, False)):
                _tighten(branch, narrowed, keys, upper=upper)
        elif kind == "string" and input_kind(base) in _MOMENTS:
            for key in ("formatMinimum", "formatMaximum"):
                if key in narrowed:
                    tightest = _tightest_moment([branch, narrowed], key)
                    if tightest is not None:
                        branch[key] = tightest
        elif kind == "string" and input_kind(base) == "text":
            if "maxLength" in narrowed:
                branch["maxLength"] = min(narrowed["maxLength"], branch.get("maxLength", 2**63))
            if "minLength" in narrowed:
                branch["minLength"] = max(narrowed["minLength"], branch.get("minLength", 0))
            pattern = narrowed.get("pattern")
            present = [branch.get("pattern"), *(n.get("pattern") for n in branch.get("allOf", []))]
            if pattern is not None and pattern not in present:
                if "pattern" in branch:
                    branch.setdefault("allOf", []).append({"pattern": pattern})
                else:
                    branch["pattern"] = pattern
    return merged


def _tighten(
    branch: dict[str, Any], narrowed: Mapping[str, Any], keys: Mapping[str, bool], *, upper: bool
) -> None:
    if not any(key in narrowed for key in keys):
        return
    bounds = [b for b in (_tightest(s, keys, upper=upper) for s in (branch, narrowed)) if b]
    pick = min if upper else max
    value, exclusive = pick(
        bounds, key=lambda bound: (bound[0], (not bound[1]) if upper else bound[1])
    )
    for key in keys:
        branch.pop(key, None)
    name = next(key for key, is_exclusive in keys.items() if is_exclusive == exclusive)
    branch[name] = value
