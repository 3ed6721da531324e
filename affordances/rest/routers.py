"""A DRF router that names a resource's routes by its registration, under the app's URL
namespace, beside the catalog's endpoints (and by DRF's own names outside it)."""

from __future__ import annotations

import re
from typing import Any

from django.forms.utils import pretty_name
from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter, Route

from affordances import routes
from affordances.catalog import get_catalog
from affordances.operations import transition_method_names
from affordances.resources import Resource
from affordances.rest.base import unmatched_route_view

__all__ = ["ResourceRouter"]


class ResourceRouter(DefaultRouter):
    """``DefaultRouter`` whose default basename is the model's registered ``BASENAME``,
    so affordance targets, links and MCP resource URIs always reverse; its URLs carry
    the catalog's endpoints too, all in the ``affordances`` namespace
    (:mod:`affordances.routes`): ``path("api/", include(router.urls))``.

    After each prefix's routes comes one that takes any other path under it ending in
    a slash (a made-up action, an extra segment): it answers the app's problem 404,
    with ``DEBUG`` on too.
    """

    include_root_view = False  # the catalog's entry point (affordances.rest.urls) is the root

    def get_default_basename(self, viewset: Any) -> str:
        model = getattr(viewset, "model", None)
        resource = _registration(model)
        if resource is not None:
            return resource.basename
        if model is not None:
            # Not registered (yet): the registration's own default, the model name.
            return str(model._meta.model_name)
        return super().get_default_basename(viewset)

    def get_routes(self, viewset: Any) -> list[Any]:
        """DRF's routes, and for a viewset with transitions one route per transition of
        its registration, each to the one ``transition`` handler: named
        ``{basename}-{method_name}``, at ``{detail}/{url path}/``."""
        found: list[Any] = list(super().get_routes(viewset))
        resource = _registration(getattr(viewset, "model", None))
        if resource is None or not callable(getattr(viewset, "transition", None)):
            return found
        paths = getattr(viewset, "transition_url_paths", {})
        for method_name in transition_method_names(resource):
            url_path = re.escape(paths.get(method_name, method_name))
            found.append(
                Route(
                    url=r"^{prefix}/{lookup}/" + url_path + r"{trailing_slash}$",
                    mapping={"post": "transition"},
                    name=routes.local_name("{basename}", method_name),
                    detail=True,
                    initkwargs={
                        "transition_name": method_name,
                        "name": pretty_name(f"transition_{method_name}"),
                    },
                )
            )
        return found

    def get_urls(self) -> list[Any]:
        """The catalog's endpoints, every registered resource's routes and their catch-all
        routes, under the app's URL namespace: one ``include(router.urls)`` is the app's
        whole REST surface (so one ResourceRouter per project)."""
        # Imported here: the catalog's views import the REST face, which imports this.
        from affordances.rest import urls as catalog_urls

        patterns: list[Any] = [*catalog_urls.urlpatterns, *super().get_urls()]
        for prefix, viewset, basename in self.registry:
            patterns.append(
                re_path(
                    rf"^{prefix}/.+/$",
                    unmatched_route_view(viewset),
                    name=routes.local_name(basename, "unmatched"),
                )
            )
        # DRF's own names too, outside the namespace, as DefaultRouter names them: a
        # project's HyperlinkedModelSerializer or HyperlinkedIdentityField(view_name=
        # "{basename}-detail") reverses them unchanged (under DRF's NamespaceVersioning,
        # in the version's namespace). After the namespaced routes, so a path resolves to
        # those (the faces read them); the catalog's endpoints keep only the app's names.
        drf_names = [p for p in super().get_urls() if getattr(p, "name", None) is not None]
        return [path("", include((patterns, routes.NAMESPACE))), *drf_names]


def _registration(model: Any) -> Resource | None:
    """The registration of a viewset's model, or None — also when the catalog cannot be
    built: a mistake in ``AFFORDANCES`` (or in what it names) must not raise while the
    URLconf is imported, which Django does before (and while) it runs the system checks
    that name the mistake (``affordances.checks``). The routes are then DRF's own, and
    every request answers the misconfiguration."""
    if model is None:
        return None
    try:
        return get_catalog().resource_for(model)
    except Exception:  # reported by the system checks, and again by every request
        return None
