"""What each arm shows at a decision point: the same conversation, its affordance lists
manipulated, nothing else.

- **A**: every representation without ``affordances`` and ``unavailableAffordances``
  (what A's server sends: the same representation without the lists), A's system
  message (no note on the lists) and A's tool definitions.
- **B**: the conversation as B's server answered it, B's note, B's tools.
- **B-focus**: B, with the tools the host shows: the read tools, the create tools and
  those named by the affordances read so far (:class:`experiment.host.Focus`). A call
  to a tool it does not show is still a real tool: the host forwards it, so it is
  scored like any other call.
- **B-wrong** (negative control): B, each representation's lists replaced by those of
  an object of the same kind in another state (bound to this object: its id, its
  version), chosen as near in count and length as the demo has (:func:`donor_for`).

Every tool result is parsed and written again the same way on every arm (compact JSON),
so the arms differ in the lists and in nothing else.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from experiment.agents.llm import SYSTEM_PROMPT
from experiment.host import Focus, instructions

__all__ = [
    "ARMS",
    "LISTS",
    "donor_for",
    "rebind",
    "system_message",
    "transform",
    "without_lists",
]

ARMS = ("A", "B", "B-focus", "B-wrong")
LISTS = ("affordances", "unavailableAffordances")


def system_message(arm: str) -> str:
    """The system message of ``arm``: the agents' prompt, the procedure and (B arms)
    the note on the lists — B-wrong's is B's."""
    return instructions(SYSTEM_PROMPT, "B" if arm == "B-wrong" else arm)


def _is_representation(value: Any) -> bool:
    return isinstance(value, dict) and "affordances" in value and isinstance(value.get("id"), int)


def _walk(value: Any, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    if isinstance(value, dict):
        value = change(value) if _is_representation(value) else value
        return {key: _walk(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, change) for item in value]
    return value


def without_lists(body: Any) -> Any:
    """``body`` with no affordance list at any depth (A's representation)."""
    return _walk(body, lambda rep: {k: v for k, v in rep.items() if k not in LISTS})


def _dump(body: Any) -> str:
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def rebind(lists: dict[str, Any], donor: dict[str, Any], target: dict[str, Any]) -> dict:
    """``donor``'s lists as if computed for ``target``: ids in ``arguments`` and in
    URLs, and ``validForVersion``, are the target's."""
    old, new = donor["id"], target["id"]
    path = re.compile(rf"/{old}/")
    result = copy.deepcopy(lists)
    for entries in result.values():
        for entry in entries:
            if isinstance(entry.get("arguments"), dict):
                entry["arguments"] = {
                    key: new if value == old and key.endswith("Id") else value
                    for key, value in entry["arguments"].items()
                }
            if isinstance(entry.get("target"), str):
                entry["target"] = path.sub(f"/{new}/", entry["target"])
            if "validForVersion" in entry:
                entry["validForVersion"] = target.get("version")
    return result


def _names(lists: dict[str, Any], key: str) -> frozenset[str]:
    return frozenset(entry.get("name") for entry in lists.get(key) or [])


def donor_for(rep: dict[str, Any], pool: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The representation whose lists B-wrong shows for ``rep``: from ``pool`` (objects
    of the same kind, read by the same user), one in another status whose available
    operations differ; of those, the nearest in the number of entries of each list,
    then in their length as JSON; the first in ``pool`` on a tie. None if none differs."""
    own = {key: rep.get(key) or [] for key in LISTS}
    size = len(_dump(own))
    candidates = []
    for index, other in enumerate(pool):
        lists = {key: other.get(key) or [] for key in LISTS}
        if other.get("status") == rep.get("status"):
            continue
        if _names(lists, "affordances") == _names(own, "affordances"):
            continue
        counts = sum(abs(len(lists[key]) - len(own[key])) for key in LISTS)
        candidates.append((counts, abs(len(_dump(lists)) - size), index, other))
    if not candidates:
        return None
    return min(candidates, key=lambda c: c[:3])[3]


def transform(
    content: str, arm: str, donors: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> str:
    """A tool result's text as ``arm`` shows it (``donors`` gives B-wrong's donor of a
    representation; a representation without one keeps its own lists)."""
    try:
        body = json.loads(content)
    except ValueError:
        return content
    if arm == "A":
        return _dump(without_lists(body))
    if arm == "B-wrong":

        def wrong(rep: dict[str, Any]) -> dict[str, Any]:
            donor = donors(rep)
            if donor is None:
                return rep
            lists = rebind({key: donor.get(key) or [] for key in LISTS}, donor, rep)
            return {**rep, **lists}

        return _dump(_walk(body, wrong))
    return _dump(body)


def focus_tools(
    definitions: list[dict[str, Any]], server_tools: list[dict[str, Any]], read: Iterable[Any]
) -> list[dict[str, Any]]:
    """B-focus's definitions: those the host shows after the model has read ``read``
    (the bodies of the tool results so far)."""
    focus = Focus()
    for body in read:
        focus.learn(body)
    by_name = {tool["name"]: tool for tool in server_tools}
    return [
        d
        for d in definitions
        if d["function"]["name"] in by_name and focus.shows(by_name[d["function"]["name"]])
    ]
