"""The order representation (docs/protocol.md#affordances): camelCase, with the caller's
affordances."""

from __future__ import annotations

from rest_framework import serializers

from affordances.rest import AffordancesMixin, ResourceUrlField
from orders.models import Order


class OrderSerializer(AffordancesMixin, serializers.ModelSerializer):
    """An order as every face shows it."""

    url = ResourceUrlField()
    customer = serializers.CharField(source="customer.username", read_only=True)
    paymentStatus = serializers.CharField(source="payment_status", read_only=True)
    trackingNumber = serializers.CharField(
        source="tracking_number", read_only=True, allow_null=True
    )
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)
    deliveredAt = serializers.DateTimeField(source="delivered_at", read_only=True, allow_null=True)

    class Meta:
        model = Order
        fields = [
            "id",
            "url",
            "customer",
            "description",
            "status",
            "paymentStatus",
            "total",
            "currency",
            "trackingNumber",
            "createdAt",
            "updatedAt",
            "deliveredAt",
            "version",
        ]
        read_only_fields = fields
