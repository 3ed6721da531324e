"""The project's URLconf after a refactoring renamed the confirm URL (task S5).

Everything is served as in ``config.urls`` except the orders, whose viewset maps the
``confirm`` transition to ``{order}/approve/``. Derived from ``config.urls`` so it keeps
up with it; the runner switches to it with ``override_settings(ROOT_URLCONF=…)``.
"""

from __future__ import annotations

from django.urls import URLResolver, include, path

from affordances.rest import ResourceRouter
from config import urls as project
from orders.views import OrderViewSet
from procurement.views import PurchaseRequestViewSet


class RenamedOrderViewSet(OrderViewSet):
    """The demo viewset with ``POST {order}/approve/`` where ``{order}/confirm/`` was."""

    transition_url_paths = {"confirm": "approve"}


router = ResourceRouter(trailing_slash=True)
router.register("orders", RenamedOrderViewSet)
router.register("purchase-requests", PurchaseRequestViewSet)


def _is_api(pattern: object) -> bool:
    return isinstance(pattern, URLResolver) and pattern.urlconf_name is project.router.urls


urlpatterns = [
    *(pattern for pattern in project.urlpatterns if not _is_api(pattern)),
    path("api/", include(router.urls)),
]
assert len(urlpatterns) == len(project.urlpatterns), "config.urls no longer includes its router"
