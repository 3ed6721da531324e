"""What the admin says to an operator: an operation's description and its history in words.

A description is written once, for every face, and an agent wants the machine names in
it (`customer_request`, `orders.cancel_order`). An operator reads the admin's labels
instead: a backticked state, input or choice becomes its label, any other backticked name
code, and a sentence naming a permission codename (developer text: the admin shows an
operation only to someone holding it) is left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from affordances.history import HistoryEntry
from affordances.operations import Operation
from affordances.resources import Resource
from affordances.wording import argument_words, run_title, state_label, words_of

__all__ = ["history_rows", "operator_description", "reference_description"]

_TICKED = re.compile(r"`([^`]+)`")
# A sentence ends at ., ! or ? and white space (a split too many only keeps more apart);
# no look-behind, so the ReDoS audit can count its steps.
_SENTENCE_END = re.compile(r"[.!?]\s+")
_CODENAME = re.compile(r"^([a-z_][a-z0-9_]*)\.[a-z_][a-z0-9_]*$")


def _sentences(text: str) -> list[str]:
    """``text`` cut after each sentence's closing mark (kept with its sentence)."""
    found, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        found.append(text[start : end.start() + 1])
        start = end.end()
    found.append(text[start:])
    return found


def _is_codename(token: str) -> bool:
    """``orders.cancel_order``: an installed app's label, a dot, a codename."""
    match = _CODENAME.match(token)
    return match is not None and match[1] in {config.label for config in apps.get_app_configs()}


def _sentence(text: str, words: dict[str, str]) -> SafeString:
    parts: list[SafeString] = []
    position = 0
    for match in _TICKED.finditer(text):
        parts.append(format_html("{}", text[position : match.start()]))
        label = words.get(match[1])
        parts.append(
            format_html("<em>{}</em>", label) if label else format_html("<code>{}</code>", match[1])
        )
        position = match.end()
    parts.append(format_html("{}", text[position:]))
    return SafeString("".join(parts))


def operator_description(operation: Operation) -> SafeString:
    """The operation's description as HTML paragraphs for an operator (see the module)."""
    words = words_of(operation)
    paragraphs: list[SafeString] = []
    for paragraph in re.split(r"\n\s*\n", operation.description.strip()):
        kept = [
            _sentence(sentence, words)
            for sentence in _sentences(" ".join(paragraph.split()))
            if sentence and not any(_is_codename(token) for token in _TICKED.findall(sentence))
        ]
        if kept:
            paragraphs.append(SafeString(" ".join(kept)))
    return format_html_join("", "<p>{}</p>", ((paragraph,) for paragraph in paragraphs))


def reference_description(operation: Operation) -> SafeString:
    """The whole description for the catalog page (a reference: every sentence, the
    machine names kept), its backticked names as code and its paragraphs as paragraphs."""
    paragraphs = re.split(r"\n\s*\n", operation.description.strip())
    return format_html_join(
        "", "<p>{}</p>", ((_sentence(" ".join(p.split()), {}),) for p in paragraphs if p.strip())
    )


def history_rows(resource: Resource, entries: Iterable[HistoryEntry]) -> list[dict[str, Any]]:
    """An object's history in words: each run's operation title, the states' labels and
    the arguments as (label, value) pairs; "—" where the viewer may not know the
    operation (affordances.history decides)."""
    rows = []
    for entry in entries:
        record = entry.record
        known = entry.operation is not None
        rows.append(
            {
                "record": record,
                "name": entry.operation,
                "title": run_title(resource, record.operation, record.operation_name)
                if known
                else "—",
                "source": state_label(resource, record.source_state),
                "target": state_label(resource, record.target_state),
                "arguments": argument_words(
                    resource, record.operation, record.operation_name, entry.arguments or {}
                )
                if known
                else [],
                "via": record.get_via_display(),
            }
        )
    return rows
