"""A DRF router that names a resource's routes by its registration."""

from __future__ import annotations

from typing import Any

from rest_framework.routers import DefaultRouter

from affordances.catalog import get_catalog

__all__ = ["ResourceRouter"]


class ResourceRouter(DefaultRouter):
    """``DefaultRouter`` whose default basename is the model's registered ``BASENAME``,
    so affordance targets, links and MCP resource URIs always reverse."""

    include_root_view = False  # the app's entry point (affordances.rest.urls) is the root

    def get_default_basename(self, viewset: Any) -> str:
        model = getattr(viewset, "model", None)
        resource = get_catalog().resource_for(model) if model is not None else None
        if resource is not None:
            return resource.basename
        if model is not None:
            # Not registered (yet): the registration's own default, the model name.
            return str(model._meta.model_name)
        return super().get_default_basename(viewset)
