"""Content negotiation by quality values (RFC 9110 §12.5.1), for every view of the app.

DRF's default negotiation ranks the ``Accept`` header's media ranges by specificity and
ignores their ``q``: ``application/prs.hal-forms+json;q=1.0, …, application/json;q=0.7``
(Ketting's default) gets JSON, because the JSON renderer comes first. Here each renderer
takes the quality of the most specific range that matches it; the highest quality wins,
then the more specific match, then the server's order of renderers. ``q=0`` means "not
this one". ``?format=`` still picks a renderer outright.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.utils.http import parse_header_parameters
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

__all__ = ["ContentNegotiation", "MediaRange", "parse_media_range"]


@dataclass(frozen=True)
class MediaRange:
    """One element of an ``Accept`` header (or a renderer's media type)."""

    type: str
    subtype: str
    params: tuple[tuple[str, str], ...]  # without q
    quality: float

    @property
    def specificity(self) -> int:
        """``*/*`` 0, ``type/*`` 1, ``type/subtype`` 2, with parameters 3."""
        if self.type == "*":
            return 0
        if self.subtype == "*":
            return 1
        return 3 if self.params else 2

    def covers(self, media_type: MediaRange) -> bool:
        """Whether this range admits the (concrete) ``media_type``."""
        if self.type != "*" and self.type != media_type.type:
            return False
        if self.subtype != "*" and self.subtype != media_type.subtype:
            return False
        # As DRF's own matching: a parameter the renderer declares must agree; one only
        # the client names (``indent=4``, ``version=2``) is for the renderer to read.
        asked = dict(self.params)
        return all(asked.get(key, value) == value for key, value in media_type.params)


def _quality(text: str | None) -> float:
    """A weight, clamped to [0, 1]; one that cannot be read counts as 1 (lenient, as a
    client that wrote it still asked for the type)."""
    if text is None:
        return 1.0
    try:
        value = float(text)
    except ValueError:
        return 1.0
    return min(max(value, 0.0), 1.0) if value == value else 1.0  # NaN → 1


def parse_media_range(text: str) -> MediaRange | None:
    """``type/subtype;param=value;q=0.5`` → a :class:`MediaRange`; None if unreadable."""
    try:
        full_type, params = parse_header_parameters(text)
    except ValueError:
        return None
    main, slash, sub = full_type.strip().lower().partition("/")
    if not slash or not main or not sub or (main == "*" and sub != "*"):
        return None
    quality = _quality(params.pop("q", None))
    return MediaRange(main, sub, tuple(sorted(params.items())), quality)


class ContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation (its header bounds, ``?format=``, parsers) with RFC 9110 ranking."""

    def select_renderer(
        self,
        request: Request,
        renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        format_param = self.settings.URL_FORMAT_OVERRIDE
        wanted = format_suffix
        if wanted is None and format_param and format_param in request.query_params:
            # Present means chosen: ``?format=`` names no renderer (404, as ``?format=x``).
            wanted = request.query_params[format_param]
        if wanted is not None:
            renderers = self.filter_renderers(renderers, wanted)
        ranges = [
            parsed
            for text in self.get_accept_list(request)
            if (parsed := parse_media_range(text)) is not None
        ]
        if not ranges:
            # No Accept header, or nothing readable in it: anything goes (RFC 9110).
            ranges = [MediaRange("*", "*", (), 1.0)]
        best: tuple[tuple[float, int, int], BaseRenderer, MediaRange] | None = None
        for position, renderer in enumerate(renderers):
            offered = parse_media_range(renderer.media_type)
            if offered is None:
                continue
            match = _best_range(offered, ranges)
            if match is None or match.quality <= 0:
                continue
            rank = (match.quality, match.specificity, -position)
            if best is None or rank > best[0]:
                best = (rank, renderer, match)
        if best is None:
            raise exceptions.NotAcceptable(available_renderers=renderers)
        _, renderer, match = best
        # The renderer's own type, with the parameters the client asked for (``indent``).
        accepted = ";".join(
            [str(renderer.media_type), *(f"{key}={value}" for key, value in match.params)]
        )
        return renderer, accepted


def _best_range(offered: MediaRange, ranges: Sequence[MediaRange]) -> MediaRange | None:
    """The most specific range admitting ``offered`` (the highest q among equals)."""
    found: MediaRange | None = None
    for candidate in ranges:
        if not candidate.covers(offered):
            continue
        if found is None or (candidate.specificity, candidate.quality) > (
            found.specificity,
            found.quality,
        ):
            found = candidate
    return found
