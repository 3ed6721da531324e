from __future__ import annotations

from affordances.rest import ResourceRouter
from procurement.views import PurchaseRequestViewSet

router = ResourceRouter(trailing_slash=True)
router.register("purchase-requests", PurchaseRequestViewSet)

urlpatterns = router.urls
