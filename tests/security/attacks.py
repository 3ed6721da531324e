"""What the attack tests share: every spelling of a request, and all of an answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.http import QueryDict
from django.test import Client

HAL = "application/prs.hal-forms+json"

# Every spelling of a request a client can vary without changing what it asks for.
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ACCEPTS = (
    None,
    "application/json",
    HAL,
    "application/hal+json",
    "application/prs.hal-forms+json;q=1.0, application/json;q=0.7, text/html;q=0.6",
    "text/html",
    "application/xml",
    "*/*",
)
FORMATS = (None, "json", "api", "hal-forms", "hal")


def wire(response: Any) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    """Everything a client receives: status, every header, the body."""
    return response.status_code, tuple(sorted(response.headers.items())), response.content


Answer = tuple[int, tuple[tuple[str, str], ...], bytes]


def echo_free(answer: Answer, path: str) -> Answer:
    """``answer`` with the request's own path, which a page may echo (a browser's login
    link comes back to it), written ``<path>``, and its length counted again: what a
    client asked is no news to it; anything else must still be byte-identical."""
    status, headers, body = answer
    query = QueryDict(mutable=True)
    query["next"] = path
    spellings = {path, query.urlencode(safe="/").removeprefix("next=")}
    for spelling in sorted(spellings, key=len, reverse=True):
        body = body.replace(spelling.encode(), b"<path>")
    kept = tuple((k, v) for k, v in headers if k.lower() != "content-length")
    return status, (*kept, ("Content-Length", str(len(body)))), body


def request(client: Client, method: str, path: str, **extra: Any) -> Any:
    return client.generic(method, path, **extra)


def variants(path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``path`` with every method, ``Accept`` and ``?format=`` (a body where one goes)."""
    for method in METHODS:
        for accept in ACCEPTS:
            for fmt in FORMATS:
                url = path if fmt is None else f"{path}?format={fmt}"
                extra: dict[str, Any] = {}
                if accept is not None:
                    extra["HTTP_ACCEPT"] = accept
                if method in {"POST", "PUT", "PATCH"}:
                    extra.update(data=b'{"amount": 10}', content_type="application/json")
                yield method, url, extra
