"""``/api/docs/``: drf-spectacular's Swagger UI under the project's own opener policy.

drf-spectacular answers its Swagger page with ``Cross-Origin-Opener-Policy: unsafe-none``
(for Swagger's OAuth2 pop-up, which talks back to its opener), and SecurityMiddleware
only fills in a header a view left unset. The project has no OAuth2 flow, only bearer
tokens pasted into "Authorize", so the page keeps ``SECURE_CROSS_ORIGIN_OPENER_POLICY``
like every other one. Its scripts and styles come from the sidecar, same-origin.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.views import SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response

__all__ = ["SwaggerView"]


class SwaggerView(SpectacularSwaggerView):
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
