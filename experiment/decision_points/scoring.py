"""Whether one completion at one decision point is the oracle's decision.

The calls of a completion are its ``tool_calls``, or the calls written into its text
(:func:`experiment.host.parse_calls`, as the host takes them). A call is a *read* when
its tool is a ``get_`` or ``list_`` tool of the user's catalog; every other call is an
attempted write (an invented name too: it changes nothing, but it is no decision to
leave the object).

- **Write item**: correct when the completion makes exactly one attempted write and it
  is the oracle's tool on the object read, with the oracle's key arguments — each equal
  to the oracle's value, or where the task accepts others (``accepted``) any accepted
  value — every argument in the tool's schema and within the constraints the object's
  affordance states (from B's read: the truth on every arm); ``expectedVersion``, if
  given, the version read. Reads beside it are allowed.
- **Trap item**: correct when the completion attempts no write and either answers in
  words that give one of the item's reasons and no reason the item does not have
  (:func:`experiment.reasons.why_failure`), or — where the oracle itself went on to
  another object at this point (``movesOn``) — only reads other objects.

Secondary facts per completion: ``refusedWrite`` (an attempted write the server would
refuse: not a tool of the catalog, not among the object's affordances, on another
object, or with arguments outside the schema or the constraints), ``invented`` (a tool
name the catalog does not have), ``reread`` (a read of the object just read).
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from experiment.host import parse_calls
from experiment.reasons import why_failure

__all__ = ["calls_of", "is_read", "score"]


def is_read(name: str) -> bool:
    return name.startswith(("get_", "list_"))


def calls_of(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, arguments) of every call a completion makes (arguments None when they are
    not a JSON object)."""
    raw = message.get("tool_calls") or parse_calls(message.get("content")).calls
    calls: list[tuple[str, Any]] = []
    for call in raw:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = None
        calls.append(
            (str(function.get("name", "")), arguments if isinstance(arguments, dict) else None)
        )
    return calls


def _same(given: Any, wanted: Any) -> bool:
    if isinstance(wanted, bool) or isinstance(given, bool):
        return given is wanted
    if isinstance(wanted, int | float) or isinstance(given, int | float):
        try:
            return Decimal(str(given)) == Decimal(str(wanted))
        except InvalidOperation:
            return False
    if isinstance(wanted, str) and isinstance(given, str):
        return given.strip().rstrip(".").casefold() == wanted.strip().rstrip(".").casefold()
    return bool(given == wanted)


def _within(name: str, value: Any, constraints: dict[str, Any] | None) -> bool:
    """``value`` meets the affordance's constraint on ``name`` (none: any value)."""
    import jsonschema

    schema = ((constraints or {}).get("properties") or {}).get(name)
    if not schema:
        return True
    if isinstance(value, str) and any(k in schema for k in ("minimum", "maximum")):
        try:
            value = float(value)
        except ValueError:
            return False
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _id_of(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _server_accepts(item: dict[str, Any], name: str, arguments: dict[str, Any] | None) -> bool:
    """What the server would do with this write, as far as the read tells: run it."""
    obj = item["object"]
    available = item["available"]
    if arguments is None or name not in available:
        return False
    if _id_of(arguments.get(obj["idArgument"])) != obj["id"]:
        return False
    schema = item["schemas"].get(name) or {}
    properties = schema.get("properties") or {}
    if any(key not in properties for key in arguments):
        return False
    if any(key not in arguments for key in schema.get("required") or []):
        return False
    version = arguments.get("expectedVersion")
    if version is not None and _id_of(version) != obj["version"]:
        return False
    return all(_within(key, value, available[name]) for key, value in arguments.items())


def _key_arguments(item: dict[str, Any], arguments: dict[str, Any]) -> bool:
    expected = item["expected"]
    accepted = expected.get("accepted") or {}
    for key, wanted in expected["arguments"].items():
        if key not in arguments:
            return False
        also = accepted.get(key)
        if also == "any":
            continue  # any value within the constraints (checked with the server's view)
        if not any(_same(arguments[key], value) for value in [wanted, *(also or [])]):
            return False
    return True


def score(item: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    """``{"correct", "writes", "refusedWrite", "invented", "reread", "why"}`` of one
    completion (``message``: the assistant message as the endpoint sent it)."""
    catalog = set(item["catalog"])
    obj = item["object"]
    calls = calls_of(message)
    writes = [(name, args) for name, args in calls if not (name in catalog and is_read(name))]
    reads = [(name, args) for name, args in calls if name in catalog and is_read(name)]
    reread = any(
        args is not None and _id_of(args.get(obj["idArgument"])) == obj["id"] for _, args in reads
    )
    facts: dict[str, Any] = {
        "writes": len(writes),
        "refusedWrite": any(not _server_accepts(item, n, a) for n, a in writes),
        "invented": any(name not in catalog for name, _ in calls),
        "reread": reread,
        "why": None,
    }
    if item["kind"] == "write":
        correct = False
        if len(writes) == 1:
            name, arguments = writes[0]
            correct = (
                name == item["expected"]["tool"]
                and arguments is not None
                and _server_accepts(item, name, arguments)
                and _key_arguments(item, arguments)
            )
        facts["correct"] = correct
        return facts
    trap = item["expected"]
    if writes:
        facts["correct"] = False
    elif calls:
        facts["correct"] = bool(trap["movesOn"]) and not reread
    else:
        answer = str(message.get("content") or "")
        failures = [why_failure(answer, code, allowed=trap["allowed"]) for code in trap["reasons"]]
        facts["why"] = None if None in failures else failures[0]
        facts["correct"] = None in failures
    return facts
