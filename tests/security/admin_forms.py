"""A Django admin change form as a browser submits it (the admin tests of the library and
the demo post what a person's browser would, not hand-written data)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from django.test import Client


class _FormReader(HTMLParser):
    """The values a browser would submit from the page's change form."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.data: dict[str, list[str]] = {}
        self.fields: set[str] = set()
        self._in_form = False
        self._select: str | None = None
        self._select_options: list[tuple[str, bool]] = []
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {key: value or "" for key, value in attrs}
        if tag == "form" and a.get("id", "").endswith("_form"):
            self._in_form = True
        if not self._in_form or "disabled" in a:
            if tag == "option" and self._select is not None:
                self._select_options.append((a.get("value", ""), "selected" in a))
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = a.get("type", "text")
            if kind in {"submit", "button", "file", "image", "reset"}:
                return
            self.fields.add(name)
            if kind in {"checkbox", "radio"}:
                if "checked" in a:
                    self.data.setdefault(name, []).append(a.get("value", "on"))
                return
            self.data.setdefault(name, []).append(a.get("value", ""))
        elif tag == "select" and name:
            self.fields.add(name)
            self._select, self._select_options = name, []
        elif tag == "option" and self._select is not None:
            self._select_options.append((a.get("value", ""), "selected" in a))
        elif tag == "textarea" and name:
            self.fields.add(name)
            self._textarea, self._text = name, []

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "select" and self._select is not None:
            chosen = [value for value, selected in self._select_options if selected]
            if not chosen and self._select_options:
                chosen = [self._select_options[0][0]]
            self.data[self._select] = chosen
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            self.data[self._textarea] = ["".join(self._text).removeprefix("\n")]
            self._textarea = None


def read_form(client: Client, url: str) -> tuple[dict[str, Any], set[str]]:
    """The change form's data as a browser would post it, and its editable field names."""
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    reader = _FormReader()
    reader.feed(response.content.decode())
    editable = {name for name in reader.fields if not name.startswith(("csrf", "_"))}
    return dict(reader.data), editable


def post_edit(client: Client, url: str, form: dict[str, Any], **changes: Any) -> Any:
    return client.post(url, {**form, **{k: str(v) for k, v in changes.items()}, "_save": "Save"})


def edit(client: Client, url: str, **changes: Any) -> Any:
    form, _ = read_form(client, url)
    return post_edit(client, url, form, **changes)
