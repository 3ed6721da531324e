"""A purchase request and its life cycle: policy, not status, decides what applies.

Draft → submitted → approved → ordered → received → invoiced → paid, or rejected,
withdrawn, cancelled on the way. Ten operations move it along; five more (``expedite``,
``insure``, ``file_claim``, ``recall``, ``dispute_invoice``) sound like natural next
steps but apply only in rare situations.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.utils import timezone
from django_fsm import FSMField, FSMModelMixin, transition

from affordances import creates, operation
from procurement import budget, inputs, rules
from procurement.reference import CostCenter, FreezePeriod, Supplier
from procurement.states import Status, state_reasons

__all__ = ["CostCenter", "FreezePeriod", "PurchaseRequest", "Status", "Supplier"]

S = Status
P = "procurement."
DESTRUCTIVE = {"destructiveHint": True}
SAFE = {"destructiveHint": False}


def _reject_consequence(request: PurchaseRequest) -> str:
    return (
        f"Purchase request #{request.pk} ({request.title}, {request.amount}) will be "
        "rejected for good; this cannot be undone."
    )


class PurchaseRequest(FSMModelMixin, models.Model):
    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="purchase_requests"
    )
    title = models.CharField(max_length=200)
    cost_center = models.ForeignKey(CostCenter, on_delete=models.PROTECT, related_name="requests")
    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="requests")
    quantity = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    unit_price = models.DecimalField(
        max_digits=12, decimal_places=2, validators=[MinValueValidator(Decimal("0.01"))]
    )
    amount = models.DecimalField(max_digits=14, decimal_places=2, editable=False)
    needed_by = models.DateField()
    quote_reference = models.CharField(max_length=30, blank=True, default="")
    status = FSMField(max_length=16, choices=Status.choices, default=Status.DRAFT, protected=True)
    version = models.PositiveIntegerField(default=1)
    po_number = models.CharField(max_length=20, blank=True, default="")
    delivery_date = models.DateField(null=True, blank=True)
    expedited = models.BooleanField(default=False)
    insured = models.BooleanField(default=False)
    received_quantity = models.PositiveIntegerField(default=0)
    claim = models.CharField(max_length=500, blank=True, default="")
    recalled = models.BooleanField(default=False)
    invoice_number = models.CharField(max_length=30, blank=True, default="")
    invoice_amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    payment_method = models.CharField(max_length=20, blank=True, default="")
    paid_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["requester", "status"])]
        permissions = [
            ("submit_purchase_request", "Can submit, quote and withdraw own requests"),
            ("approve_purchase_request", "Can approve or reject requests up to 5000"),
            ("approve_large_purchase_request", "Can approve requests up to 50000"),
            ("order_purchase_request", "Can order, cancel, expedite and insure"),
            ("receive_purchase_request", "Can receive goods, file claims and recalls"),
            ("invoice_purchase_request", "Can record and dispute invoices"),
            ("pay_purchase_request", "Can pay invoices"),
        ]

    def __str__(self) -> str:
        return f"Purchase request #{self.pk} ({self.status})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.amount = self.unit_price * self.quantity
        super().save(*args, **kwargs)

    @classmethod
    @creates(
        title="Create purchase request",
        input=inputs.CreatePurchaseRequestInput,
        permission=P + "add_purchaserequest",
        constraints=rules.create_constraints,
    )
    def draft(
        cls,
        *,
        user: Any,
        title: str,
        cost_center: str,
        supplier: str,
        quantity: int,
        unit_price: Decimal,
        needed_by: date,
        quote_reference: str = "",
    ) -> PurchaseRequest:
        """Start a purchase request as a `draft` of the caller's; nothing is committed yet.

        Arguments: `title`, `costCenter` (a code; requesters may only charge the cost
        centers they belong to), `supplier` (its name), `quantity`, `unitPrice`,
        `neededBy` (required) and `quoteReference` (optional; needed to submit above
        10000). Requires the `procurement.add_purchaserequest` permission.
        """
        center = CostCenter.objects.filter(code=cost_center).first()
        if center is None:
            raise ValidationError({"costCenter": ["No cost center with this code."]})
        vendor = Supplier.objects.filter(name=supplier).first()
        if vendor is None:
            raise ValidationError({"supplier": ["No supplier with this name."]})
        return cls.objects.create(
            requester=user,
            title=title,
            cost_center=center,
            supplier=vendor,
            quantity=quantity,
            unit_price=unit_price,
            needed_by=needed_by,
            quote_reference=quote_reference,
        )

    @operation(
        title="Submit for approval",
        reasons=state_reasons(S.DRAFT, before="", after="already_submitted"),
        guards=[rules.is_requester],
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.DRAFT,
        target=S.SUBMITTED,
        permission=P + "submit_purchase_request",
        conditions=[rules.quote_on_file],
    )
    def submit(self) -> None:
        """Send one's own draft to an approver; it can no longer be edited, only withdrawn.

        Takes no arguments. Only from `draft`, only by its requester (`not_requester`),
        and above 10000 only with a quote on file (`quote_missing`: attach one first).
        Requires the `procurement.submit_purchase_request` permission.
        """

    @operation(
        title="Attach quote",
        input=inputs.AttachQuoteInput,
        reasons=state_reasons(S.DRAFT, before="", after="already_submitted"),
        guards=[rules.is_requester],
        annotations=SAFE,
    )
    @transition(
        field=status, source=S.DRAFT, target=S.DRAFT, permission=P + "submit_purchase_request"
    )
    def attach_quote(self, *, quote_reference: str) -> None:
        """Record the supplier's quote on one's own draft (needed to submit above 10000).

        The status stays `draft`. Argument `quoteReference` (required): `Q-` and 3 to 12
        digits. Only from `draft`, only by its requester (`not_requester`).
        Requires the `procurement.submit_purchase_request` permission.
        """
        self.quote_reference = quote_reference

    @operation(
        title="Withdraw request",
        reasons=state_reasons(S.DRAFT, S.SUBMITTED, before="", after="already_approved"),
        guards=[rules.is_requester],
        annotations=DESTRUCTIVE,
    )
    @transition(
        field=status,
        source=[S.DRAFT, S.SUBMITTED],
        target=S.WITHDRAWN,
        permission=P + "submit_purchase_request",
    )
    def withdraw(self) -> None:
        """Take back one's own request before it is approved; this cannot be undone.

        Takes no arguments. Only from `draft` or `submitted` (`already_approved` later),
        only by its requester (`not_requester`).
        Requires the `procurement.submit_purchase_request` permission.
        """

    @operation(
        title="Approve request",
        input=inputs.NoteInput,
        reasons=state_reasons(S.SUBMITTED, before="not_submitted", after="already_approved"),
        guards=[rules.four_eyes, rules.within_approval_limit],
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.SUBMITTED,
        target=S.APPROVED,
        permission=P + "approve_purchase_request",
        conditions=[rules.supplier_not_blocked, rules.budget_available],
    )
    def approve(self, *, note: str = "") -> None:
        """Approve a submitted request and reserve its amount on the cost center's budget.

        After approval a buyer may order it. Argument `note` (optional). Only from
        `submitted`; not when the supplier is blocked (`supplier_blocked`) or the cost
        center's remaining budget is below the amount (`budget_exhausted`, also when a
        concurrent approval took the last of it); never one's own request
        (`own_request`); approvers up to 5000, senior approvers up to 50000
        (`over_approval_limit`). Requires `procurement.approve_purchase_request`.
        """
        # Who approved is in the request's history (the audit record of this run).
        budget.reserve(self, operation="approve_purchase_request")

    @operation(
        title="Reject request",
        input=inputs.RejectInput,
        reasons=state_reasons(S.SUBMITTED, before="not_submitted", after="already_approved"),
        guards=[rules.four_eyes],
        annotations=DESTRUCTIVE,
        confirm=True,
        consequence=_reject_consequence,
    )
    @transition(
        field=status,
        source=S.SUBMITTED,
        target=S.REJECTED,
        permission=P + "approve_purchase_request",
    )
    def reject(self, *, reason: str, note: str = "") -> None:
        """Refuse a submitted request for good; nothing is reserved or bought.

        Argument `reason` (required): `over_budget`, `not_needed`, `wrong_supplier` or
        `missing_information`; `note` (optional). Only from `submitted`, never one's
        own request (`own_request`). Requires `procurement.approve_purchase_request`.
        """

    @operation(
        title="Request changes",
        input=inputs.RequiredNoteInput,
        reasons=state_reasons(S.SUBMITTED, before="not_submitted", after="already_approved"),
        guards=[rules.four_eyes],
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.SUBMITTED,
        target=S.DRAFT,
        permission=P + "approve_purchase_request",
    )
    def request_changes(self, *, note: str) -> None:
        """Send a submitted request back to its requester as a `draft` to be corrected.

        Argument `note` (required): what must change. Only from `submitted`, never
        one's own request (`own_request`). Requires `procurement.approve_purchase_request`.
        """

    @operation(
        title="Place order",
        input=inputs.PlaceOrderInput,
        reasons=state_reasons(S.APPROVED, before="not_approved", after="already_ordered"),
        constraints=rules.order_constraints,
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.APPROVED,
        target=S.ORDERED,
        permission=P + "order_purchase_request",
        conditions=[rules.supplier_not_blocked, rules.not_frozen],
    )
    def order(self, *, delivery_date: date) -> None:
        """Send the purchase order of an approved request to its supplier.

        Issues a PO number; the supplier is now bound to deliver. Argument `deliveryDate`
        (required): one of the next ten working days from the supplier's lead time on
        (the affordance lists them). Only from `approved`; not while the supplier is
        blocked (`supplier_blocked`) nor during a freeze period of the cost center
        (`period_frozen`). Requires `procurement.order_purchase_request`.
        """
        self.delivery_date = delivery_date
        self.po_number = f"PO-{self.pk:06d}"

    @operation(
        title="Cancel request",
        input=inputs.CancelInput,
        reasons=state_reasons(
            S.APPROVED, S.ORDERED, before="not_approved", after="already_received"
        ),
        annotations=DESTRUCTIVE,
    )
    @transition(
        field=status,
        source=[S.APPROVED, S.ORDERED],
        target=S.CANCELLED,
        permission=P + "order_purchase_request",
    )
    def cancel(self, *, reason: str, note: str = "") -> None:
        """Cancel an approved or ordered request; its reserved budget is released.

        This cannot be undone. Argument `reason` (required): `no_longer_needed`,
        `supplier_unable` or `duplicate`; `note` (optional). Only from `approved` or
        `ordered` (`already_received` once goods arrived).
        Requires `procurement.order_purchase_request`.
        """
        budget.release(self)

    @operation(
        title="Receive goods",
        input=inputs.ReceiveInput,
        reasons=state_reasons(S.ORDERED, before="not_ordered", after="already_received"),
        constraints=rules.receive_constraints,
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.ORDERED,
        target=S.RECEIVED,
        permission=P + "receive_purchase_request",
    )
    def receive(self, *, quantity: int) -> None:
        """Record the goods of an ordered request as received; invoicing may follow.

        Argument `quantity` (required): units received, at most the units ordered; fewer
        records a partial delivery. Only from `ordered`.
        Requires `procurement.receive_purchase_request`.
        """
        self.received_quantity = quantity

    @operation(
        title="Record invoice",
        input=inputs.InvoiceInput,
        reasons=state_reasons(S.RECEIVED, before="not_received", after="already_invoiced"),
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.RECEIVED,
        target=S.INVOICED,
        permission=P + "invoice_purchase_request",
    )
    def invoice(self, *, invoice_number: str, amount: Decimal) -> None:
        """Record the supplier's invoice for received goods, as the invoice states it.

        It can be paid only if it matches the value received within 2 %.
        Arguments `invoiceNumber` and `amount` (required). Only from `received`.
        Requires `procurement.invoice_purchase_request`.
        """
        self.invoice_number = invoice_number
        self.invoice_amount = amount

    @operation(
        title="Pay invoice",
        input=inputs.PayInput,
        reasons=state_reasons(S.INVOICED, before="not_invoiced", after="already_paid"),
        constraints=rules.pay_constraints,
        annotations=DESTRUCTIVE,
    )
    @transition(
        field=status,
        source=S.INVOICED,
        target=S.PAID,
        permission=P + "pay_purchase_request",
        conditions=[rules.invoice_matches],
    )
    def pay(self, *, payment_method: str) -> None:
        """Pay the invoice of a request; this ends its life cycle and settles the budget.

        Argument `paymentMethod` (required): `card` up to 1000, `cheque` up to 10000,
        `bank_transfer` any amount (the affordance lists what this invoice allows).
        Only from `invoiced`, and only when the invoice matches the value received
        within 2 % (`invoice_mismatch`). Requires `procurement.pay_purchase_request`.
        """
        assert self.invoice_amount is not None  # the condition holds
        budget.settle(self, self.invoice_amount)
        self.payment_method = payment_method
        self.paid_at = timezone.now()

    # --- the traps: plausible next steps that almost never apply ---------------------

    @operation(
        title="Expedite delivery",
        reasons=state_reasons(S.ORDERED, before="not_ordered", after="already_received"),
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.ORDERED,
        target=S.ORDERED,
        permission=P + "order_purchase_request",
        conditions=[rules.supplier_offers_express, rules.delivery_late, rules.not_expedited],
    )
    def expedite(self) -> None:
        """Pay the supplier's express service to deliver by the needed-by date.

        Rarely applies: only when the agreed delivery date is after the needed-by date
        (`delivery_on_time`), the supplier offers express (`no_express_service`) and it
        was not expedited yet (`already_expedited`). Moves the delivery date to the
        needed-by date. Takes no arguments. Only from `ordered`.
        Requires `procurement.order_purchase_request`.
        """
        self.expedited = True
        self.delivery_date = self.needed_by

    @operation(
        title="Insure shipment",
        reasons=state_reasons(S.ORDERED, before="not_ordered", after="already_received"),
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.ORDERED,
        target=S.ORDERED,
        permission=P + "order_purchase_request",
        conditions=[rules.insurable_value, rules.not_insured],
    )
    def insure(self) -> None:
        """Take out transport insurance for a high-value shipment on its way.

        Rarely applies: only for orders of at least 25000 (`below_insurance_threshold`)
        not insured yet (`already_insured`). Takes no arguments. Only from `ordered`.
        Requires `procurement.order_purchase_request`.
        """
        self.insured = True

    @operation(
        title="File claim",
        input=inputs.ClaimInput,
        reasons=state_reasons(S.RECEIVED, before="not_received", after="already_invoiced"),
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.RECEIVED,
        target=S.RECEIVED,
        permission=P + "receive_purchase_request",
        conditions=[rules.short_delivery, rules.no_claim_yet],
    )
    def file_claim(self, *, description: str) -> None:
        """File a claim with the carrier for goods missing from a delivery.

        Rarely applies: only when fewer units were received than ordered
        (`nothing_missing`) and no claim was filed yet (`claim_already_filed`).
        Argument `description` (required). Only from `received`.
        Requires `procurement.receive_purchase_request`.
        """
        self.claim = description

    @operation(
        title="Recall goods",
        input=inputs.RequiredNoteInput,
        reasons=state_reasons(S.RECEIVED, before="not_received", after="already_invoiced"),
        annotations=DESTRUCTIVE,
    )
    @transition(
        field=status,
        source=S.RECEIVED,
        target=S.RECEIVED,
        permission=P + "receive_purchase_request",
        conditions=[rules.supplier_recall_open, rules.not_recalled],
    )
    def recall(self, *, note: str) -> None:
        """Return received goods to the supplier under its product recall.

        Rarely applies: only while the supplier has an open recall notice
        (`no_recall_notice`) and the goods were not recalled yet (`already_recalled`).
        Argument `note` (required). Only from `received`.
        Requires `procurement.receive_purchase_request`.
        """
        self.recalled = True

    @operation(
        title="Dispute invoice",
        input=inputs.DisputeInput,
        reasons=state_reasons(S.INVOICED, before="not_invoiced", after="already_paid"),
        annotations=SAFE,
    )
    @transition(
        field=status,
        source=S.INVOICED,
        target=S.RECEIVED,
        permission=P + "invoice_purchase_request",
        conditions=[rules.invoice_disputable],
    )
    def dispute_invoice(self, *, reason: str) -> None:
        """Send an invoice that does not match the goods back to the supplier.

        Rarely applies: only when the invoice differs from the value received by more
        than 2 % (`invoice_matches` otherwise). The request returns to `received`, the
        invoice is cleared for a corrected one. Argument `reason` (required). Only from
        `invoiced`. Requires `procurement.invoice_purchase_request`.
        """
        self.invoice_number = ""
        self.invoice_amount = None
