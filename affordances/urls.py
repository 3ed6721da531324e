from __future__ import annotations

from django.urls import path

from affordances.views import OperationDetailView, OperationListView

urlpatterns = [
    path("operations/", OperationListView.as_view(), name="operation-list"),
    path("operations/<str:ident>/", OperationDetailView.as_view(), name="operation-detail"),
]
