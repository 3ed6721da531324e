"""The library's default test URLconf: the catalog endpoints only. Tests of a face mount
the URLconf of the test models they use (``tests/generic/*_api.py``)."""

from __future__ import annotations

from django.urls import include, path

from affordances.rest import ResourceRouter

# No resource registered: the entry point and the catalog, in the app's namespace.
urlpatterns = [path("api/", include(ResourceRouter().urls))]

handler404 = "affordances.rest.not_found_view"
