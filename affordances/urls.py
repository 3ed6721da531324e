from __future__ import annotations

from django.urls import path

from affordances.views import EntryPointView, OperationDetailView, OperationListView

urlpatterns = [
    path("", EntryPointView.as_view(), name="api-entry-point"),
    path("operations/", OperationListView.as_view(), name="operation-list"),
    path("operations/<str:ident>/", OperationDetailView.as_view(), name="operation-detail"),
]
