from __future__ import annotations

from affordances.rest import ResourceRouter
from orders.views import OrderViewSet

router = ResourceRouter(trailing_slash=True)
router.register("orders", OrderViewSet)

urlpatterns = router.urls
