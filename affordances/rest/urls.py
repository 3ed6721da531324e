"""The catalog's endpoints: the entry point, the operations and the protocol's schemas.

Not included by a project: :class:`affordances.rest.ResourceRouter` serves them beside
the resources' routes, all under the app's URL namespace (:mod:`affordances.routes`).
"""

from __future__ import annotations

from django.urls import path

from affordances import routes
from affordances.rest.views import (
    EntryPointView,
    OperationDetailView,
    OperationListView,
    ProtocolSchemaView,
)

urlpatterns = [
    path("", EntryPointView.as_view(), name=routes.ENTRY_POINT_NAME),
    path("operations/", OperationListView.as_view(), name=routes.OPERATION_LIST_NAME),
    path(
        "operations/<str:ident>/",
        OperationDetailView.as_view(),
        name=routes.OPERATION_DETAIL_NAME,
    ),
    # The protocol's JSON Schemas (docs/protocol.md#schemas), named by the OpenAPI document.
    path(
        "schemas/<slug:name>.schema.json",
        ProtocolSchemaView.as_view(),
        name=routes.PROTOCOL_SCHEMA_NAME,
    ),
]
