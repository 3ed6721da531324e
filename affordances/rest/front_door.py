"""What a person's browser meets without credentials: a page with a login link.

A browser that asks an app URL without credentials would otherwise read the raw 401
problem document and find no way in. :func:`prefers_html` tells a browser's request
(``Accept`` ranks ``text/html`` above JSON, or ``?format=api`` asks for the browsable
API) from a client's; :func:`login_page` is the page it gets instead, with a link to
the project's login that comes back to the page asked for (``?next=``).

The page depends on the request's path and ``Accept`` only, never on whether the route
exists, so it tells no more about the route set than the problem document does.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from django.conf import global_settings, settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import resolve_url
from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from rest_framework.settings import api_settings

from affordances.rest.negotiation import MediaRange, parse_media_range

__all__ = ["login_page", "login_url", "prefers_html"]

_HTML = MediaRange("text", "html", (), 1.0)
_JSON_TYPES = (
    MediaRange("application", "json", (), 1.0),
    MediaRange("application", "problem+json", (), 1.0),
)
# The browsable API's ``?format=`` (DRF's BrowsableAPIRenderer.format).
_BROWSABLE_FORMAT = "api"
_TEMPLATE = "affordances/rest/login_required.html"


def _rank(offered: MediaRange, ranges: list[MediaRange]) -> tuple[float, int]:
    """(quality, specificity) of the most specific range admitting ``offered``."""
    matching = [candidate for candidate in ranges if candidate.covers(offered)]
    if not matching:
        return (0.0, -1)
    best = max(matching, key=lambda candidate: (candidate.specificity, candidate.quality))
    return (best.quality, best.specificity)


def prefers_html(request: HttpRequest) -> bool:
    """Whether a GET or HEAD asks for a page rather than JSON: ``?format=api``, or an
    ``Accept`` that ranks ``text/html`` strictly above JSON (a browser's
    ``text/html,…,*/*;q=0.8``). ``*/*`` alone, no ``Accept`` and any other
    ``?format=`` keep the JSON problem: what a client without a preference gets."""
    if request.method not in ("GET", "HEAD"):
        return False
    format_param = api_settings.URL_FORMAT_OVERRIDE
    if format_param and format_param in request.GET:
        return request.GET[format_param] == _BROWSABLE_FORMAT
    ranges = [
        parsed
        for text in request.headers.get("Accept", "").split(",")
        if (parsed := parse_media_range(text)) is not None
    ]
    html = _rank(_HTML, ranges)
    return html[0] > 0 and html > max(_rank(json, ranges) for json in _JSON_TYPES)


def _configured_login() -> str | None:
    """The project's login page: ``LOGIN_URL`` when the project sets it, else DRF's
    (``include("rest_framework.urls")``), else none."""
    if settings.LOGIN_URL != global_settings.LOGIN_URL:
        try:
            return str(resolve_url(settings.LOGIN_URL))
        except NoReverseMatch:
            return None
    try:
        return reverse("rest_framework:login")
    except NoReverseMatch:
        return None


def login_url(request: HttpRequest, next_url: str | None = None) -> str | None:
    """The login page, coming back to ``next_url`` (the request's own path and query by
    default) once logged in; None when the project has no login page."""
    url = _configured_login()
    if url is None:
        return None
    parts = list(urlsplit(url))
    query = QueryDict(parts[3], mutable=True)
    query["next"] = next_url if next_url is not None else request.get_full_path()
    parts[3] = query.urlencode(safe="/")
    return urlunsplit(parts)


def login_page(
    request: HttpRequest, *, status: int, detail: str, next_url: str | None = None
) -> HttpResponse:
    """The page that says the resource needs a login, with the link to it."""
    context = {"login_url": login_url(request, next_url), "detail": detail}
    content = render_to_string(_TEMPLATE, context, request=request)
    return HttpResponse(content, status=status, content_type="text/html; charset=utf-8")
