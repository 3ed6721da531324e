"""``tests.generic.keys_api``'s URLconf with project URLs named like the app's routes,
for tests/test_routes.py: the app's names live in their own namespace."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path

from tests.generic import keys_api


def _elsewhere(request: object, pk: str = "") -> HttpResponse:
    return HttpResponse("the project's own page")


# After the router's URLs, which name the routes DRF's way outside the namespace too:
# Django's reverse() takes the last URL of a name, so these names stay the project's.
urlpatterns = [
    *keys_api.urlpatterns,
    path("elsewhere/<str:pk>/", _elsewhere, name="voucher-detail"),
    path("elsewhere/<str:pk>/redeem/", _elsewhere, name="voucher-redeem"),
    path("elsewhere/", _elsewhere, name="entry-point"),
]

handler404 = keys_api.handler404
