"""``config/urls.py`` after a refactoring renamed the confirm action's URL (Tegg's S5).

The project's own urlpatterns, except that the orders are served by a subclass of the
demo viewset whose ``confirm`` transition lives at ``{order}/approve/`` instead of
``{order}/confirm/`` (same basename, same route names). Everything else — the entry
point, the catalog, the token views, the three MCP endpoints — is taken from
``config.urls`` as it is. Tests switch to it with
``override_settings(ROOT_URLCONF="tests.urls_renamed")``.
"""

from __future__ import annotations

from django.urls import URLResolver, include, path
from rest_framework.routers import DefaultRouter

import orders.urls
from config.urls import urlpatterns as project_urlpatterns
from orders.views import OrderViewSet


class RenamedOrderViewSet(OrderViewSet):
    """The demo viewset with ``POST {order}/approve/`` where ``{order}/confirm/`` was."""

    transition_url_paths = {"confirm": "approve"}


router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("orders", RenamedOrderViewSet, basename="order")


def _is_orders_include(pattern: object) -> bool:
    return isinstance(pattern, URLResolver) and pattern.urlconf_name is orders.urls


urlpatterns = [
    path("api/", include(router.urls)) if _is_orders_include(pattern) else pattern
    for pattern in project_urlpatterns
]

assert sum(map(_is_orders_include, project_urlpatterns)) == 1, "config.urls changed shape"
