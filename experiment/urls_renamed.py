"""The project's URLconf after a refactoring renamed the confirm URL (task S5).

Everything is served as in ``config.urls`` except the orders, whose viewset maps the
``confirm`` transition to ``{order}/approve/``. Derived from ``config.urls`` so it keeps
up with it; the runner switches to it with ``override_settings(ROOT_URLCONF=…)``.
"""

from __future__ import annotations

from django.urls import URLResolver, include, path
from rest_framework.routers import DefaultRouter

import orders.urls
from config.urls import urlpatterns as project_patterns
from orders.views import OrderViewSet


class RenamedOrderViewSet(OrderViewSet):
    """The demo viewset with ``POST {order}/approve/`` where ``{order}/confirm/`` was."""

    transition_url_paths = {"confirm": "approve"}


router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("orders", RenamedOrderViewSet, basename="order")


def _is_orders(pattern: object) -> bool:
    return isinstance(pattern, URLResolver) and pattern.urlconf_name is orders.urls


urlpatterns = [
    *(pattern for pattern in project_patterns if not _is_orders(pattern)),
    path("api/", include(router.urls)),
]
assert len(urlpatterns) == len(project_patterns), "config.urls no longer includes orders.urls"
