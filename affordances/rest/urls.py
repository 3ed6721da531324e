"""The catalog endpoints: ``include("affordances.rest.urls")`` under the API's root."""

from __future__ import annotations

from django.urls import path

from affordances.names import ENTRY_POINT_URL_NAME
from affordances.rest.views import EntryPointView, OperationDetailView, OperationListView

urlpatterns = [
    path("", EntryPointView.as_view(), name=ENTRY_POINT_URL_NAME),
    path("operations/", OperationListView.as_view(), name="operation-list"),
    path("operations/<str:ident>/", OperationDetailView.as_view(), name="operation-detail"),
]
