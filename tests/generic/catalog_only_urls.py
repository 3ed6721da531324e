"""The catalog's endpoints included on their own, without a ResourceRouter: the wiring
of earlier releases, which the REST face's system checks warn about
(tests/test_routes.py)."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [path("api/", include("affordances.rest.urls"))]
