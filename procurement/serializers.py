"""The purchase-request representation (docs/protocol.md#affordances): camelCase, with the caller's
affordances."""

from __future__ import annotations

from rest_framework import serializers

from affordances.rest import AffordancesMixin, ResourceUrlField
from procurement.models import PurchaseRequest


class PurchaseRequestSerializer(AffordancesMixin, serializers.ModelSerializer):
    """A purchase request as every face shows it."""

    url = ResourceUrlField()
    requester = serializers.CharField(source="requester.username", read_only=True)
    costCenter = serializers.CharField(source="cost_center.code", read_only=True)
    supplier = serializers.CharField(source="supplier.name", read_only=True)
    unitPrice = serializers.DecimalField(
        source="unit_price", max_digits=12, decimal_places=2, read_only=True
    )
    neededBy = serializers.DateField(source="needed_by", read_only=True)
    quoteReference = serializers.CharField(source="quote_reference", read_only=True)
    poNumber = serializers.CharField(source="po_number", read_only=True)
    deliveryDate = serializers.DateField(source="delivery_date", read_only=True, allow_null=True)
    receivedQuantity = serializers.IntegerField(source="received_quantity", read_only=True)
    invoiceNumber = serializers.CharField(source="invoice_number", read_only=True)
    invoiceAmount = serializers.DecimalField(
        source="invoice_amount", max_digits=14, decimal_places=2, read_only=True, allow_null=True
    )
    paymentMethod = serializers.CharField(source="payment_method", read_only=True)
    paidAt = serializers.DateTimeField(source="paid_at", read_only=True, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    class Meta:
        model = PurchaseRequest
        fields = [
            "id",
            "url",
            "requester",
            "title",
            "status",
            "costCenter",
            "supplier",
            "quantity",
            "unitPrice",
            "amount",
            "neededBy",
            "quoteReference",
            "poNumber",
            "deliveryDate",
            "expedited",
            "insured",
            "receivedQuantity",
            "claim",
            "recalled",
            "invoiceNumber",
            "invoiceAmount",
            "paymentMethod",
            "paidAt",
            "createdAt",
            "updatedAt",
            "version",
        ]
        read_only_fields = fields
