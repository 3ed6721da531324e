"""The shelves and volumes behind the URL layouts projects write (issue 52, items 1 and
2), for tests/test_url_layouts.py: DRF's own hyperlinked serializers (default view names
``volume-detail``, ``shelf-detail``), the router's URLs at the top, under an instance
namespace, under nested includes, and under each of DRF's versioning schemes. Each
layout is a URLconf of its own (a class with ``urlpatterns``, as ROOT_URLCONF takes).
"""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework import serializers, versioning

from affordances.mcp import McpView
from affordances.rest import AffordancesMixin, ResourceRouter, ResourceViewSet
from tests.generic.shelves import Shelf, Volume


class VolumeLinks(AffordancesMixin, serializers.HyperlinkedModelSerializer):  # type: ignore[type-arg]
    """As a project's serializer is: DRF's ``url`` (``volume-detail``) and a hyperlink to
    its shelf (``shelf-detail``)."""

    class Meta:
        model = Volume
        fields = ["url", "id", "title", "status", "shelf", "version"]
        read_only_fields = fields


class ShelfLinks(AffordancesMixin, serializers.HyperlinkedModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Shelf
        fields = ["url", "id", "code", "state", "version"]
        read_only_fields = fields


class MisnamedLinks(AffordancesMixin, serializers.HyperlinkedModelSerializer):  # type: ignore[type-arg]
    """A hyperlink to a view name no URL has."""

    url = serializers.HyperlinkedIdentityField(view_name="tome-detail")

    class Meta:
        model = Volume
        fields = ["url", "id", "title", "status", "version"]
        read_only_fields = fields


REGISTRATIONS = {
    "generic.Shelf": {"SERIALIZER": "tests.generic.shelves_urls.ShelfLinks"},
    "generic.Volume": {"SERIALIZER": "tests.generic.shelves_urls.VolumeLinks"},
}
MISNAMED = {
    "generic.Shelf": {"SERIALIZER": "tests.generic.shelves_urls.ShelfLinks"},
    "generic.Volume": {"SERIALIZER": "tests.generic.shelves_urls.MisnamedLinks"},
}


def _router(scheme: type[versioning.BaseVersioning] | None = None) -> list[Any]:
    """A router's URLs, its viewsets versioned by ``scheme``."""
    attributes = {"versioning_class": scheme}
    router = ResourceRouter()
    router.register("shelves", type("Shelves", (ResourceViewSet,), {"model": Shelf, **attributes}))
    router.register("volumes", type("Volumes", (ResourceViewSet,), {"model": Volume, **attributes}))
    return list(router.urls)


_MCP = path("mcp", McpView.as_view(), name="mcp")
HANDLER404 = "affordances.rest.not_found_view"


def layouts() -> dict[str, Any]:
    """Each layout's URLconf (made anew: the routes come from the catalog of the
    moment), and the path of its volumes."""
    plain = _router()
    namespaced = _router()
    nested = _router()
    versions = _router(versioning.NamespaceVersioning)
    url_path = _router(versioning.URLPathVersioning)
    accept = _router(versioning.AcceptHeaderVersioning)

    def urlconf(name: str, patterns: list[Any]) -> type:
        return type(name, (), {"urlpatterns": [*patterns, _MCP], "handler404": HANDLER404})

    return {
        "plain": (urlconf("Plain", [path("api/", include(plain))]), "/api/"),
        # An application and an instance namespace, as a versioned project includes its app.
        "namespaced": (
            urlconf(
                "Namespaced",
                [path("api/v1/", include(([path("", include(namespaced))], "claims"), "v1"))],
            ),
            "/api/v1/",
        ),
        "nested": (
            urlconf(
                "Nested",
                [
                    path(
                        "api/",
                        include(
                            ([path("desk/", include((nested, "desk"), "desk"))], "outer"), "outer"
                        ),
                    )
                ],
            ),
            "/api/desk/",
        ),
        # DRF's NamespaceVersioning: one namespace per version, the same routes in each.
        "namespace-versioning": (
            urlconf(
                "Versions",
                [
                    path("api/v1/", include((versions, "api"), "v1")),
                    path("api/v2/", include((versions, "api"), "v2")),
                ],
            ),
            "/api/v2/",
        ),
        "url-path-versioning": (
            urlconf("UrlPath", [path("api/<str:version>/", include(url_path))]),
            "/api/v3/",
        ),
        "accept-header-versioning": (
            urlconf("Accept", [path("api/", include(accept))]),
            "/api/",
        ),
    }
