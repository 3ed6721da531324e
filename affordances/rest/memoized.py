"""Responses whose bodies are rendered once per key and media type (see :mod:`affordances.memo`).

The catalog and the OpenAPI document are the same bytes for every caller with the same
capabilities: encoding tens of kilobytes of JSON per request would cost more than the
rest of the request. Pages rendered around the request (the browsable API's HTML) are
rendered each time.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from rest_framework.renderers import BrowsableAPIRenderer, TemplateHTMLRenderer
from rest_framework.response import Response

from affordances import memo

__all__ = ["MemoizedResponse"]

_PER_REQUEST_RENDERERS = (BrowsableAPIRenderer, TemplateHTMLRenderer)


class MemoizedResponse(Response):
    """A ``Response`` of ``data`` that depends on ``key`` only (and on the negotiated
    renderer and media type): its body is rendered once."""

    def __init__(self, data: Any, *, key: Hashable, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.memo_key = key

    @property
    def rendered_content(self) -> Any:
        renderer = getattr(self, "accepted_renderer", None)
        if renderer is None or isinstance(renderer, _PER_REQUEST_RENDERERS):
            return super().rendered_content
        key = ("rendered", self.memo_key, type(renderer), self.accepted_media_type)

        def render() -> tuple[Any, str | None]:
            body = super(MemoizedResponse, self).rendered_content
            return body, self.get("Content-Type")

        body, content_type = memo.memoized(key, render)
        if content_type is not None:
            self["Content-Type"] = content_type
        return body
