"""Responses whose bodies are rendered once per key and rendering (see :mod:`affordances.memo`).

The catalog and the OpenAPI document are the same bytes for every caller with the same
capabilities: encoding tens of kilobytes of JSON per request would cost more than the
rest of the request. Pages rendered around the request (the browsable API's HTML) are
rendered each time.

A rendering is keyed by what changes the bytes, not by how the client spelled its
``Accept`` header: ``application/json; x=1`` and ``application/json; x=2`` are one entry
(a client could otherwise make a new cached copy per request).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from django.utils.http import parse_header_parameters
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, TemplateHTMLRenderer
from rest_framework.response import Response

from affordances import memo

__all__ = ["MemoizedResponse"]

_PER_REQUEST_RENDERERS = (BrowsableAPIRenderer, TemplateHTMLRenderer)


def _rendering(renderer: Any, accepted_media_type: str | None) -> Hashable | None:
    """What of the negotiation shapes the bytes; None when that cannot be told."""
    if isinstance(renderer, JSONRenderer):
        # DRF's JSON renderers read one parameter, ``indent`` (clamped to 0…8).
        return (type(renderer), renderer.get_indent(accepted_media_type or "", {}))
    _, params = parse_header_parameters(accepted_media_type or "")
    # Another renderer might read any parameter: with one, render for this request only.
    return None if params else (type(renderer),)


class MemoizedResponse(Response):
    """A ``Response`` of ``data`` that depends on ``key`` only (and on the negotiated
    rendering): its body is rendered once."""

    def __init__(self, data: Any, *, key: Hashable, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.memo_key = key

    @property
    def rendered_content(self) -> Any:
        renderer = getattr(self, "accepted_renderer", None)
        if renderer is None or isinstance(renderer, _PER_REQUEST_RENDERERS):
            return super().rendered_content
        rendering = _rendering(renderer, getattr(self, "accepted_media_type", None))
        if rendering is None:
            return super().rendered_content
        key = ("rendered", self.memo_key, rendering)

        def render() -> tuple[Any, str | None]:
            body = super(MemoizedResponse, self).rendered_content
            return body, self.get("Content-Type")

        body, content_type = memo.memoized(key, render, size=lambda kept: len(kept[0] or b""))
        if content_type is not None:
            self["Content-Type"] = content_type
        return body
