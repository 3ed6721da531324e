"""The REST face: DRF serializers, viewsets, renderers and the OpenAPI hook.

Everything a project wires is importable from here::

    from affordances.rest import (
        AffordancesMixin,
        ResourceRouter,
        ResourceUrlField,
        ResourceViewSet,
    )

Names are loaded on first use: DRF imports the configured renderer classes while
``rest_framework.views`` is itself being imported, so this package must not import
its views eagerly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from affordances.lazy import lazy_exports

if TYPE_CHECKING:
    from affordances.rest.base import (
        ProblemResponsesMixin,
        not_found_view,
        problem_exception_handler,
    )
    from affordances.rest.browsable import AffordancesBrowsableAPIRenderer
    from affordances.rest.negotiation import ContentNegotiation
    from affordances.rest.openapi import AutoSchema
    from affordances.rest.renderers import (
        HAL_FORMS_MEDIA_TYPE,
        HAL_MEDIA_TYPE,
        HalFormsRenderer,
        HalRenderer,
    )
    from affordances.rest.routers import ResourceRouter
    from affordances.rest.schema import SchemaView
    from affordances.rest.serializers import AffordancesMixin, ResourceUrlField
    from affordances.rest.views import EntryPointView, OperationDetailView, OperationListView
    from affordances.rest.viewsets import (
        CreateResourceMixin,
        EditResourceMixin,
        ListResourceMixin,
        ResourceMixin,
        ResourceViewSet,
        RetrieveResourceMixin,
        TransitionActionsMixin,
    )

_EXPORTS = {
    "AffordancesBrowsableAPIRenderer": "browsable",
    "AffordancesMixin": "serializers",
    "AutoSchema": "openapi",
    "ContentNegotiation": "negotiation",
    "CreateResourceMixin": "viewsets",
    "EditResourceMixin": "viewsets",
    "EntryPointView": "views",
    "HAL_FORMS_MEDIA_TYPE": "renderers",
    "HAL_MEDIA_TYPE": "renderers",
    "HalFormsRenderer": "renderers",
    "HalRenderer": "renderers",
    "ListResourceMixin": "viewsets",
    "OperationDetailView": "views",
    "OperationListView": "views",
    "ProblemResponsesMixin": "base",
    "ResourceMixin": "viewsets",
    "ResourceRouter": "routers",
    "ResourceUrlField": "serializers",
    "ResourceViewSet": "viewsets",
    "RetrieveResourceMixin": "viewsets",
    "SchemaView": "schema",
    "TransitionActionsMixin": "viewsets",
    "not_found_view": "base",
    "problem_exception_handler": "base",
}

__all__ = [
    "HAL_FORMS_MEDIA_TYPE",
    "HAL_MEDIA_TYPE",
    "AffordancesBrowsableAPIRenderer",
    "AffordancesMixin",
    "AutoSchema",
    "ContentNegotiation",
    "CreateResourceMixin",
    "EditResourceMixin",
    "EntryPointView",
    "HalFormsRenderer",
    "HalRenderer",
    "ListResourceMixin",
    "OperationDetailView",
    "OperationListView",
    "ProblemResponsesMixin",
    "ResourceMixin",
    "ResourceRouter",
    "ResourceUrlField",
    "ResourceViewSet",
    "RetrieveResourceMixin",
    "SchemaView",
    "TransitionActionsMixin",
    "not_found_view",
    "problem_exception_handler",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
