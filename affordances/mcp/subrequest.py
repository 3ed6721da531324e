"""Ask the REST face itself: an internal request through Django's whole request stack.

The forms profile navigates the API as hypermedia. Rather than re-implementing what each URL
serves, it sends the agent's request through the project's middleware and URL routing
to the view a browser or client would reach, with the agent's own credentials (its
``Authorization`` header) and ``Accept: application/prs.hal-forms+json``. Whatever
Django answers an outside client (400 for too many fields, 413, the project's 404…) it
answers here. Only URLs of this server under the API entry point are followed.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIRequest
from django.urls import reverse

from affordances import registry, routes
from affordances.models import VIA_ENVIRON_KEY, Interface
from affordances.names import HAL_FORMS_MEDIA_TYPE

__all__ = ["Answer", "OutsideApi", "api_path", "send"]


class OutsideApi(ValueError):
    """A URL this server will not follow: another host, or outside the API."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    # Where a redirect points (the forms profile follows the API's own redirects).
    location: str | None = None


class _Handler(BaseHandler):
    """The project's middleware chain and URL routing, without the request signals
    (which would close the database connection of the outer request)."""

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware()


_handler: _Handler | None = None


def _stack() -> _Handler:
    global _handler
    if _handler is None:
        _handler = _Handler()
    return _handler


@registry.derived
def _forget_handler() -> None:
    # Built from MIDDLEWARE and the URLconf.
    global _handler
    _handler = None


def api_path(request: Any, url: Any) -> tuple[str, str]:
    """(path, query) of ``url`` if it is this server's API; else :class:`OutsideApi`."""
    if not isinstance(url, str) or not url:
        raise OutsideApi("The url must be a non-empty string.")
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        own = urlsplit(request.build_absolute_uri("/"))
        if (parts.scheme, parts.netloc.lower()) != (own.scheme, own.netloc.lower()):
            raise OutsideApi("Only URLs of this API can be followed.")
    root = reverse(routes.ENTRY_POINT)
    path = parts.path or "/"
    if not path.startswith(root) or ".." in path.split("/"):
        raise OutsideApi(f"Only URLs under {request.build_absolute_uri(root)} can be followed.")
    return path, parts.query


def send(request: Any, method: str, url: str, body: dict[str, Any] | None = None) -> Answer:
    """``method url`` as the caller, answered as HAL-FORMS (or a problem document)."""
    path, query = api_path(request, url)
    # UTF-8 as the agent sent it: ASCII escapes would make a body six times its size
    # (an emoji is 12 bytes escaped) and push it past DATA_UPLOAD_MAX_MEMORY_SIZE.
    payload = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
    environ = {
        key: value
        for key, value in request.META.items()
        if key in _KEPT or (key.startswith("wsgi.") and key != "wsgi.input")
    }
    environ.update(
        {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": query,
            "HTTP_ACCEPT": HAL_FORMS_MEDIA_TYPE,
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(payload)),
            "wsgi.input": io.BytesIO(payload),
            # The REST face records this run as the MCP interface's (audit `via`).
            VIA_ENVIRON_KEY: Interface.MCP,
        }
    )
    environ.setdefault("wsgi.url_scheme", request.scheme)
    response = _stack().get_response(WSGIRequest(environ))
    try:
        content = getattr(response, "content", b"")  # never a streaming answer here
        data = json.loads(content) if content else None
    except ValueError:
        data = None
    location = response.get("Location") if 300 <= response.status_code < 400 else None
    return Answer(response.status_code, data, location)


# What the inner request inherits: where the server is, and who the caller is.
_KEPT = {
    "SERVER_NAME",
    "SERVER_PORT",
    "HTTP_HOST",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_HOST",
    "HTTP_AUTHORIZATION",
    "REMOTE_ADDR",
}
