"""``tests.generic.keys_api``'s URLconf with project URLs named like the app's routes,
for tests/test_routes.py: the app's names live in their own namespace."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path

from tests.generic import keys_api


def _elsewhere(request: object, pk: str = "") -> HttpResponse:
    return HttpResponse("the project's own page")


urlpatterns = [
    path("elsewhere/<str:pk>/", _elsewhere, name="voucher-detail"),
    path("elsewhere/<str:pk>/redeem/", _elsewhere, name="voucher-redeem"),
    path("elsewhere/", _elsewhere, name="entry-point"),
    *keys_api.urlpatterns,
]

handler404 = keys_api.handler404
