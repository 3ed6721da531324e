"""A DRF router that names a resource's routes by its registration."""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from rest_framework.routers import DefaultRouter

from affordances.catalog import get_catalog
from affordances.rest.exceptions import unmatched_route_view

__all__ = ["ResourceRouter"]


class ResourceRouter(DefaultRouter):
    """``DefaultRouter`` whose default basename is the model's registered ``BASENAME``,
    so affordance targets, links and MCP resource URIs always reverse.

    After each prefix's routes comes one that takes any other path under it ending in
    a slash (a made-up action, an extra segment): it answers the app's problem 404,
    with ``DEBUG`` on too.
    """

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

    def get_urls(self) -> list[Any]:
        urls: list[Any] = list(super().get_urls())
        for prefix, viewset, basename in self.registry:
            urls.append(
                re_path(
                    rf"^{prefix}/.+/$",
                    unmatched_route_view(viewset),
                    name=f"{basename}-unmatched",
                )
            )
        return urls
