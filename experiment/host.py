"""The host between a chat model and an MCP session: what the model is told and shown.

The arms of the experiment must differ in the affordance layer and nothing else, so the
host — not each server — writes everything around the tool results, the same way on
every arm:

- **Instructions** (:func:`instructions`): one procedure for every arm (:data:`PROCEDURE`),
  naming only what the model can do through its tools. The servers' own MCP
  ``instructions`` are not passed on: B's add a "read before you act" step and mention
  ``_meta["affordances/idempotencyKey"]`` and ``resources/read``, which a chat model
  cannot use. Each arm then gets a *description* of what its answers contain
  (:data:`ARM_NOTES`: B's affordance lists, C's HAL-FORMS documents), never a step.
- **Tool definitions** (:func:`neutral_definitions`): the catalog's descriptions speak
  of affordances and ``validForVersion`` on every arm, A's too; the host shows the read
  tools and ``expectedVersion`` in words true on every arm and drops any other sentence
  about affordances.
- **Results** (:func:`shown_result`): the text blocks only (a ``resource_link`` points at
  ``resources/read``, which the model cannot call), and a refusal without ``current``:
  only B's server sends it, so it goes on every arm or on none — none, because no host
  can add it to A's or C's refusals without calls of its own, and the one recovery
  every arm then has is the one the procedure names: read the object again.
- **Protocol errors and unknown tools** (:func:`host_error`): a call the host cannot
  run goes back to the model as an error message, never ends the run.
- **Calls written as text** (:func:`parse_calls`): small models write calls into the
  answer's text. A JSON object that is exactly a call (``name`` and ``arguments``) is
  one, whatever the name — the host then runs it, or answers that no such tool exists;
  a list is taken only if every item is a call, so a quoted list of affordances (whose
  entries also carry ``target``, ``validForVersion``…) is never run; a message that
  tries to be a call and cannot be read gets an error back (:data:`UNREADABLE`).
- **B-focus** (:class:`Focus`): interface B behind a host that shows the read tools,
  the collection operations (creating: nothing read offers them) and the tools named by
  the affordances of what the model has read so far in the run. The server's list is
  the same fixed, cached one; only what the model is shown narrows. A call to a real
  tool the host did not show is forwarded to the server, whose answer (a success or a
  refusal with its reason, as on B) goes back to the model; only a name the server
  does not have is an unknown tool.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ARM_NOTES",
    "PROCEDURE",
    "UNREADABLE",
    "Focus",
    "Parsed",
    "affordance_names",
    "host_error",
    "host_version",
    "instructions",
    "is_problem",
    "neutral_definitions",
    "parse_calls",
    "shown_result",
]

PROCEDURE = """\
How to work with this server:
1. Before you change an object, read it with a tool, and act on what you read.
2. Call a tool with the arguments its schema describes. Where a tool or form takes \
`expectedVersion`, give the object's `version` as you read it: if the object changed \
since, the call is refused with stale_version and nothing is done.
3. A refused call returns a problem whose `code` says why: not_found, stale_version, \
operation_not_available (with a `reason`), validation_error (with `errors` per \
argument). On stale_version, read the object again and decide anew; never send the \
same call again blindly.
4. A call the host could not run (an unknown tool, arguments that are not a JSON \
object) comes back as an `error`; nothing was done.
"""

_B_NOTE = """\
What the answers contain: every object you read carries `affordances`, the operations \
that apply to it now — each with the tool `name`, the bound `arguments` (the object's \
id), `constraints` (a JSON Schema narrowing that tool's input: only these values are \
accepted{compact}) and `validForVersion` (the object's version they were computed \
for) — and `unavailableAffordances`, operations you could use that do not apply now, \
each with a `reason`.
"""

ARM_NOTES: dict[str, str] = {
    "A": "",
    "B": _B_NOTE.format(compact=""),
    "B-compact": _B_NOTE.format(
        compact="; absent when nothing is narrowed; the rest is in the tool's definition"
    ),
    "B-focus": _B_NOTE.format(compact="")
    + "Your tools are the read tools, the tools that create objects, and the tools "
    "named by the affordances of the objects you have read.\n",
    "C": """\
What the answers contain: HAL-FORMS documents. `_links` lead to other resources (the \
entry point is named in read_resource's description); `_templates` are the actions a \
document offers you now, each with its `properties` (offered `options`, `min`, `max`, \
`regex`; hidden ones such as `expectedVersion` are copied as they are).
""",
}

# What the host answers when a message tries to be a tool call and cannot be read.
UNREADABLE = (
    "Your last message looked like a tool call but could not be read: {why}. Nothing was "
    "done. To call a tool, use the tool-calling format (or one JSON object "
    '{{"name": "<tool>", "arguments": {{...}}}}); to finish, reply in words without JSON.'
)


def instructions(system_prompt: str, interface: str) -> str:
    """The system message of ``interface``: the agent's prompt, the procedure, the note."""
    note = ARM_NOTES.get(interface, "")
    return system_prompt + "\n" + PROCEDURE + ("\n" + note if note else "")


def host_version() -> str:
    """What the host tells a model, hashed: runs under another wording do not compare."""
    text = json.dumps([PROCEDURE, ARM_NOTES, UNREADABLE, _READ_WORDING], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --- tool definitions ------------------------------------------------------------------

_AFFORDANCE_WORDS = re.compile(r"affordance|validForVersion|read before you act", re.IGNORECASE)
_PARENTHESES = re.compile(r"\s*\([^()]*\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_READ_WORDING = {
    "get": "Read one {noun} you may see, by its id. Unknown or hidden ids are not_found.",
    "list": "List the {nouns} you may see, one page at a time (`page`, `pageSize`){filters}.",
    "expectedVersion": (
        "The object's `version` as you read it; if the object changed since, the call is "
        "refused with stale_version and nothing is done."
    ),
}


def _without_affordance_words(text: str) -> str:
    """``text`` without the parentheses and sentences that speak of affordances (and
    exactly as it was when none does)."""
    if not _AFFORDANCE_WORDS.search(text):
        return text
    text = _PARENTHESES.sub(
        lambda m: "" if _AFFORDANCE_WORDS.search(m.group(0)) else m.group(0), text
    )
    kept = [s for s in _SENTENCE.split(text.strip()) if not _AFFORDANCE_WORDS.search(s)]
    return " ".join(kept).strip()


def _noun(title: str, verb: str) -> str:
    return title[len(verb) :].strip().lower() if title.lower().startswith(verb) else title.lower()


def neutral_definitions(
    definitions: list[dict[str, Any]], listed: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A copy of the tool definitions without what the catalog says of affordances.

    ``listed`` are the MCP tools the definitions were made from (their titles and
    annotations). Read tools get a description true on every arm; ``expectedVersion``
    is the object's ``version``; any other sentence about affordances goes. C's two
    tools say nothing of the kind and stay as they are.
    """
    definitions = copy.deepcopy(definitions)
    by_name = {tool.get("name"): tool for tool in listed}
    for definition in definitions:
        function = definition["function"]
        tool = by_name.get(function["name"], {})
        title = str(tool.get("title") or function["name"])
        read_only = bool((tool.get("annotations") or {}).get("readOnlyHint"))
        properties = (function.get("parameters") or {}).get("properties") or {}
        if read_only and function["name"].startswith("get_"):
            function["description"] = _READ_WORDING["get"].format(noun=_noun(title, "get"))
        elif read_only and function["name"].startswith("list_"):
            filters = [name for name in properties if name not in {"page", "pageSize"}]
            function["description"] = _READ_WORDING["list"].format(
                nouns=_noun(title, "list"),
                filters=f"; {', '.join(f'`{f}`' for f in filters)} filter it" if filters else "",
            )
        else:
            function["description"] = _without_affordance_words(function.get("description", ""))
        version = properties.get("expectedVersion")
        if isinstance(version, dict):
            properties["expectedVersion"] = {
                **version,
                "description": _READ_WORDING["expectedVersion"],
            }
        for schema in properties.values():
            text = schema.get("description") if isinstance(schema, dict) else None
            if isinstance(text, str) and _AFFORDANCE_WORDS.search(text):
                schema["description"] = _without_affordance_words(text)
    return definitions


# --- results ---------------------------------------------------------------------------


def is_problem(body: Any) -> bool:
    """An RFC 9457 problem as the servers send it (``code``, ``status``, ``detail``)."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("code"), str)
        and isinstance(body.get("status"), int)
        and "detail" in body
    )


def _without_current(text: str) -> str:
    try:
        body = json.loads(text)
    except ValueError:
        return text
    if is_problem(body) and "current" in body:
        body = {key: value for key, value in body.items() if key != "current"}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return text


def shown_result(result: dict[str, Any] | None) -> str:
    """The text the model gets for a ``CallToolResult``: its text blocks, a problem's
    ``current`` left out (see the module's docstring)."""
    if result is None:
        return ""
    parts = [
        _without_current(str(block.get("text", "")))
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return "\n".join(parts)


def host_error(message: str, *, code: int | None = None) -> str:
    """An error the host answers for a call it could not run (nothing was done)."""
    error: dict[str, Any] = {"message": message}
    if code is not None:
        error = {"code": code, **error}
    return json.dumps({"error": error}, ensure_ascii=False)


def unknown_tool(name: str) -> str:
    return host_error(
        f"Unknown tool {name!r}: it is not one of the tools you were given. Nothing was done."
    )


def affordance_names(body: Any) -> set[str]:
    """The tool names the ``affordances`` lists in ``body`` name, at any depth (an object,
    a page of objects, a refusal). ``unavailableAffordances`` apply to nothing now."""
    names: set[str] = set()
    if isinstance(body, dict):
        for key, value in body.items():
            if key == "affordances" and isinstance(value, list):
                names |= {
                    entry["name"]
                    for entry in value
                    if isinstance(entry, dict) and isinstance(entry.get("name"), str)
                }
            else:
                names |= affordance_names(value)
    elif isinstance(body, list):
        for item in body:
            names |= affordance_names(item)
    return names


@dataclass
class Focus:
    """B-focus: the tools shown are the read tools, the collection operations and those
    named by the affordances of the objects read so far in the run."""

    named: set[str] = field(default_factory=set)

    @staticmethod
    def base(tool: dict[str, Any]) -> bool:
        """A read tool, or one that acts on no object (a create: nothing read offers it)."""
        if (tool.get("annotations") or {}).get("readOnlyHint"):
            return True
        required = (tool.get("inputSchema") or {}).get("required") or []
        return not any(str(name).endswith("Id") for name in required)

    def learn(self, body: Any) -> None:
        self.named |= affordance_names(body)

    def shows(self, tool: dict[str, Any]) -> bool:
        return self.base(tool) or tool.get("name") in self.named


# --- calls written as text -------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """What the text of an answer holds: calls (in the chat API's ``tool_calls`` shape),
    or why it tried to be one and could not be read (``unreadable``), or neither."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    unreadable: str | None = None


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_CALL_KEYS = {"name", "arguments", "id"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array that starts at a ``{`` or ``[`` of ``text`` and parses,
    outermost first (what is inside a value found is never looked at again)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    position = 0
    while True:
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i != -1]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found.append(value)
        position = end


def _as_call(item: Any) -> tuple[str, dict[str, Any]] | str | None:
    """(name, arguments) of a call object; a reason when it tries to be one and is not;
    None when it is no call at all (a quoted affordance, a representation, a report)."""
    if not isinstance(item, dict):
        return None
    if set(item) == {"type", "function"} or set(item) == {"id", "type", "function"}:
        item = item.get("function")
        if not isinstance(item, dict):
            return "`function` is not an object"
    if "name" not in item or not set(item) <= _CALL_KEYS:
        return None  # other keys: quoted data (affordances carry target, validForVersion…)
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        return "`name` is not a tool name"
    if "arguments" not in item:
        return f'the call of {name} has no "arguments" (give {{}} for none)'
    arguments = item["arguments"]
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return f"the arguments of {name} are not JSON"
    if not isinstance(arguments, dict):
        return f"the arguments of {name} are not a JSON object"
    return name, arguments


def _attempt(content: str) -> str | None:
    """The text of a message that is (or tries to be) a call: a tool_call tag's, or
    the message's when it is nothing but JSON (fenced or bare); None for words."""
    tagged = _TAGGED.search(content)
    if tagged:
        return tagged.group(1).strip()
    stripped = content.strip()
    fenced = _FENCE.fullmatch(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    return stripped if stripped.startswith(("{", "[")) else None


def parse_calls(content: str | None) -> Parsed:
    """Tool calls written into an answer's text (fenced, ``<tool_call>`` tags, or bare).

    A call is a JSON object with exactly ``name`` and ``arguments`` (or the chat API's
    ``{"type": "function", "function": …}``), whatever the name: the host decides
    whether it knows the tool. A list counts only if every item is a call. Nothing
    inside a value found is looked at, so a representation's affordance entries are
    never taken for calls.
    """
    if not content:
        return Parsed()
    pieces = _TAGGED.findall(content) + _FENCE.findall(content)
    values = [value for piece in pieces for value in _json_values(piece)]
    if not values:
        values = _json_values(content)
    calls: list[dict[str, Any]] = []
    problems: list[str] = []
    for value in values:
        items = value if isinstance(value, list) else [value]
        read = [_as_call(item) for item in items]
        if isinstance(value, list) and not all(isinstance(r, tuple) for r in read):
            continue  # a list that is not all calls is quoted data: run none of it
        for outcome in read:
            if isinstance(outcome, tuple):
                name, arguments = outcome
                calls.append(
                    {
                        "id": f"text-call-{len(calls)}",
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": json.dumps(arguments, ensure_ascii=False),
                        },
                    }
                )
            elif isinstance(outcome, str):
                problems.append(outcome)
    if calls:
        return Parsed(calls=calls)
    if problems:
        return Parsed(unreadable=problems[0])
    attempt = _attempt(content)
    if attempt is None:
        return Parsed()
    try:
        whole = json.loads(attempt)
    except ValueError:
        return Parsed(unreadable="it is not valid JSON")
    if isinstance(whole, dict) and "name" not in whole:
        return Parsed(unreadable='it has no "name" and "arguments"')
    return Parsed(unreadable='it is not one {"name", "arguments"} object per call')


def known_names(definitions: Iterable[dict[str, Any]]) -> set[str]:
    return {definition["function"]["name"] for definition in definitions}
