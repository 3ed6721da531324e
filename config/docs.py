"""``/api/docs/``: drf-spectacular's Swagger UI under the project's own opener policy.

drf-spectacular answers its Swagger page with ``Cross-Origin-Opener-Policy: unsafe-none``
(for Swagger's OAuth2 pop-up, which talks back to its opener), and SecurityMiddleware
only fills in a header a view left unset. The project has no OAuth2 flow, only bearer
tokens pasted into "Authorize", so the page keeps ``SECURE_CROSS_ORIGIN_OPENER_POLICY``
like every other one. Its scripts and styles come from the sidecar, same-origin.

The document it loads is for logged-in callers only (it lists what they may do): a
visitor whose schema request would be refused gets a page that says so, with the login
link, instead of Swagger's "Failed to load API definition".
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpResponse
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response

from affordances.compat.drf import django_request
from affordances.rest.base import refusal_at
from affordances.rest.front_door import login_page

__all__ = ["SwaggerView"]


class SwaggerView(SpectacularSwaggerView):
    # drf-spectacular's page with its language and Swagger UI's colours at 4.5:1.
    template_name = "api_docs.html"

    @extend_schema(exclude=True)  # as drf-spectacular's own: the page is no API operation
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        asked = django_request(request)
        if refusal_at(urlsplit(self._get_schema_url(request)).path, asked) is not None:
            detail = gettext("The API's description lists what you may do: log in to read it.")
            return login_page(asked, status=200, detail=detail)
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        policy = settings.SECURE_CROSS_ORIGIN_OPENER_POLICY
        if policy:
            response["Cross-Origin-Opener-Policy"] = policy
        else:
            del response["Cross-Origin-Opener-Policy"]  # none on any other page either
        return response
