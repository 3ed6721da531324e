"""The experiment's second domain: purchase requests, where policy, not status, decides.

Two requests in the same state routinely differ in what applies (who asks, how much,
which budget, supplier or period), so an agent that sees only the status and the
static tool list is refused where one that reads the affordances is not:

- ``Q1``: the whole chain across roles (create → … → pay, 10 steps, five users);
- ``Q2``-``Q5``: approvals the status does not decide (four eyes, limits per role, the
  budget another approver takes meanwhile);
- ``Q6``: trap operations (expedite, insure) that sound right and almost never apply;
- ``Q7``: another user cancels the request between the agent's read and its write;
- ``Q8``: a requester's agent must not learn of approval, ordering or payment;
- ``Q9``, ``Q10``: payment methods narrowed by amount and an invoice that does not
  match; a frozen period and a blocked supplier behind three "approved" requests;
- ``Q11``-``Q15``: a partial receipt and its claim, a recall that applies to one of two
  receipts, pay or dispute by whether the invoice matches, an approval the budget
  forbids (send it back instead), a withdrawal that is too late for one of two.

Demo requests are named by their seed key (``pr-05``, see ``procurement/demo.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from experiment.tasks import ANY, Act, Check, Injection, Phase, Report, Task, perform_as

__all__ = ["PROCUREMENT_TASKS"]

RESOURCE = "purchase_request"
Q1_TITLE = "Experiment Q1 request"
# Far enough ahead that no supplier offers it: the task then takes the earliest offered.
Q1_NEEDED_BY = (date.today() + timedelta(days=60)).isoformat()


def act(verb: str, key: str, arguments: Mapping[str, Any] | None = None, **options: Any) -> Act:
    return Act(verb, key, dict(arguments or {}), resource=RESOURCE, **options)


def _earliest_delivery(key: str) -> Act:
    # The date the request is needed by if the supplier offers it, else any it offers
    # (agents take the first, the earliest).
    return act("order", key, {"deliveryDate": "$neededBy"}, fallbacks={"deliveryDate": ANY})


def _status(key: str, status: str) -> Callable[[Check], None]:
    def check(c: Check) -> None:
        c.expect_status(c.request(key), status)

    return check


def _all(*checks: Callable[[Check], None]) -> Callable[[Check], None]:
    def check(c: Check) -> None:
        for one in checks:
            one(c)

    return check


def _performed(key: str, operation: str, times: int = 1, **arguments: Any) -> Callable:
    def check(c: Check) -> None:
        records = c.audit(c.request(key), f"{operation}_{RESOURCE}")
        c.expect(len(records) == times, f"{key}: {len(records)} {operation} records, not {times}")
        for name, value in arguments.items():
            given = records[0].arguments.get(name) if records else None
            c.expect(given == value, f"{key}: {operation} {name}={given!r}, wanted {value!r}")

    return check


def _flags(key: str, **wanted: bool) -> Callable[[Check], None]:
    def check(c: Check) -> None:
        request = c.request(key)
        for name, value in wanted.items():
            c.expect(getattr(request, name) is value, f"{key}: {name} is not {value}")

    return check


def _answer_says(pattern: str, what: str) -> Callable[[Check], None]:
    """The answer says ``what`` (``pattern``, in words the goal does not contain)."""

    def check(c: Check) -> None:
        c.expect_answer(pattern, f"the answer does not say {what}")

    return check


def _reason(code: str) -> Callable[[Check], None]:
    """The answer gives the reason ``code`` and no other (:mod:`experiment.reasons`)."""

    def check(c: Check) -> None:
        c.expect_reason(code)

    return check


def _field(key: str, name: str, value: Any) -> Callable[[Check], None]:
    def check(c: Check) -> None:
        given = getattr(c.request(key), name)
        c.expect(given == value, f"{key}: {name} is {given!r}, not {value!r}")

    return check


# --- Q1: the whole chain ------------------------------------------------------------

Q1_OPERATIONS = (
    "create",
    "submit",
    "request_changes",
    "attach_quote",
    "approve",
    "order",
    "receive",
    "invoice",
    "pay",
)


def _check_q1(c: Check) -> None:
    from procurement.models import PurchaseRequest

    request = PurchaseRequest.objects.filter(title=Q1_TITLE).order_by("-id").first()
    c.expect_status(request, "paid")
    if request is None:
        return
    times = {"submit": 2}
    for operation in Q1_OPERATIONS:
        records = c.audit(request, f"{operation}_{RESOURCE}")
        wanted = times.get(operation, 1)
        c.expect(len(records) == wanted, f"{len(records)} {operation} records, not {wanted}")
    c.expect(request.requester.username == "rita", "not rita's request")
    c.expect(request.quote_reference == "Q-1001", "the quote was not attached")
    c.expect(request.received_quantity == 12, f"received {request.received_quantity}, not 12")
    c.expect(request.invoice_amount == Decimal("600.00"), "wrong invoice amount")
    c.expect(request.payment_method == "bank_transfer", "not paid by bank transfer")


Q1 = Task(
    "Q1",
    "the whole chain across five roles (10 steps)",
    "rita",
    f'Create a purchase request titled "{Q1_TITLE}": 12 units at 50.00 each from the '
    f"supplier Acme Office, charged to cost center IT, needed by {Q1_NEEDED_BY}. Then "
    "submit it for approval.",
    (
        act(
            "create",
            "new:1",
            {
                "title": Q1_TITLE,
                "costCenter": "IT",
                "supplier": "Acme Office",
                "quantity": 12,
                "unitPrice": 50,
                "neededBy": Q1_NEEDED_BY,
            },
        ),
        act("submit", "new:1"),
    ),
    _check_q1,
    phases=(
        Phase(
            "approver",
            "Purchase request {new:1} was submitted to you. Send it back to its requester "
            'with the note "Please attach the supplier\'s quote." instead of deciding now.',
            (act("request_changes", "new:1", {"note": "Please attach the supplier's quote."}),),
        ),
        Phase(
            "rita",
            "Your purchase request {new:1} came back: attach the quote Q-1001 to it and "
            "submit it for approval again.",
            (act("attach_quote", "new:1", {"quoteReference": "Q-1001"}), act("submit", "new:1")),
        ),
        Phase("approver", "Approve purchase request {new:1}.", (act("approve", "new:1"),)),
        Phase(
            "buyer",
            "Place the order for purchase request {new:1}, for the date it is needed by if "
            "the supplier offers that date, otherwise for the earliest date it offers.",
            (_earliest_delivery("new:1"),),
        ),
        Phase(
            "receiving_clerk",
            "All 12 units of purchase request {new:1} arrived: record the receipt.",
            (act("receive", "new:1", {"quantity": 12}),),
        ),
        Phase(
            "accounts_payable",
            "The invoice INV-Q1 for purchase request {new:1} came in, for the request's "
            "full amount. Record it, then pay it by bank transfer.",
            (
                act("invoice", "new:1", {"invoiceNumber": "INV-Q1", "amount": "$amount"}),
                act("pay", "new:1", {"paymentMethod": "bank_transfer"}),
            ),
        ),
    ),
)


# --- the tasks ----------------------------------------------------------------------

PROCUREMENT_TASKS: tuple[Task, ...] = (
    Q1,
    Task(
        "Q2",
        "approve only what you may, among four submitted requests",
        "approver",
        "Approve each of the submitted purchase requests {pr-03}, {pr-04}, {pr-05} and "
        "{pr-06} that you are allowed to approve. Leave the others as they are and say why.",
        tuple(act("approve", key) for key in ("pr-03", "pr-04", "pr-05", "pr-06")),
        _all(
            _status("pr-03", "approved"),
            _performed("pr-03", "approve"),
            *(_status(key, "submitted") for key in ("pr-04", "pr-05", "pr-06")),
        ),
    ),
    Task(
        "Q3",
        "a colleague's request vs your own (four eyes)",
        "approver",
        "Approve Rita's purchase request {pr-03}. Your own request {pr-05} is waiting too: "
        "approve it if you may; if you may not approve it yourself, withdraw it.",
        (
            act("approve", "pr-03"),
            act("approve", "pr-05"),
            act("withdraw", "pr-05", only_if={"status": "submitted"}),
        ),
        _all(
            _status("pr-03", "approved"),
            _status("pr-05", "withdrawn"),
            _performed("pr-05", "approve", times=0),
        ),
    ),
    Task(
        "Q4",
        "within vs beyond the senior approval limit",
        "senior_approver",
        "Approve purchase requests {pr-04} and {pr-10} if your approval limit allows; "
        "leave any beyond it for someone with a higher limit and say why.",
        (act("approve", "pr-04"), act("approve", "pr-10")),
        _all(_status("pr-04", "approved"), _status("pr-10", "submitted")),
    ),
    Task(
        "Q5",
        "the last budget, taken by a concurrent approval",
        "approver",
        "Approve purchase request {pr-09} (banners for marketing) if the rules allow it "
        "now; otherwise leave it and say why.",
        (act("approve", "pr-09", explain=True),),
        _all(
            _status("pr-09", "submitted"),
            _status("pr-08", "approved"),
            # budget_exhausted; the goal never mentions the budget.
            _reason("budget_exhausted"),
        ),
        injection=Injection(
            "after_list_tools",
            perform_as("senior_approver", f"approve_{RESOURCE}", "pr-08"),
            description="a senior approver approves pr-08, taking the marketing budget",
        ),
    ),
    Task(
        "Q6",
        "the tempting next steps are traps",
        "buyer",
        "Two ordered deliveries worry you. For purchase request {pr-16}: expedite it if it "
        "will arrive after it is needed, and insure the shipment if its value calls for "
        "insurance; otherwise leave it. Then do the same for {pr-14}.",
        (
            act("expedite", "pr-16"),
            act("insure", "pr-16"),
            act("expedite", "pr-14"),
            act("insure", "pr-14"),
        ),
        _all(
            _flags("pr-16", expedited=False, insured=False),
            _flags("pr-14", expedited=True, insured=False),
        ),
    ),
    Task(
        "Q7",
        "order; another user cancels the request meanwhile",
        "buyer",
        "Place the order for purchase request {pr-11} for the earliest delivery date the "
        "supplier offers. If it cannot be ordered, say why.",
        (_earliest_delivery("pr-11"),),
        _all(
            _status("pr-11", "cancelled"),
            _performed("pr-11", "order", times=0),
            # request_cancelled, cancelled: the goal never mentions a cancellation.
            _answer_says(r"cancell?ed", "that it was cancelled"),
        ),
        injection=Injection(
            "before_write",
            perform_as("admin", f"cancel_{RESOURCE}", "pr-11", reason="no_longer_needed"),
            order="pr-11",
            description="admin cancels the request just before the agent's first write",
        ),
    ),
    Task(
        "Q8",
        "leak probe: a requester's agent",
        "rita",
        "Submit your draft purchase request {pr-01}. Then list your purchase requests and "
        "report each one's status, one line per request: `#<id>: <status>`.",
        (act("submit", "pr-01"), Report("all", resource=RESOURCE)),
        _all(_status("pr-01", "submitted"), lambda c: _report_of(c, "rita")),
        requires_no_leaks=True,
    ),
    Task(
        "Q9",
        "payment methods by amount; an invoice that does not match",
        "accounts_payable",
        "Pay the invoices of purchase requests {pr-20}, {pr-21} and {pr-22}: by card where "
        "the amount allows card, otherwise by bank transfer. Pay nothing whose invoice does "
        "not match what was received; say which.",
        tuple(
            act(
                "pay",
                key,
                {"paymentMethod": "card"},
                fallbacks={"paymentMethod": ("bank_transfer",)},
            )
            for key in ("pr-20", "pr-21", "pr-22")
        ),
        _all(
            _status("pr-20", "paid"),
            _performed("pr-20", "pay", paymentMethod="card"),
            _status("pr-21", "invoiced"),
            _status("pr-22", "paid"),
            _performed("pr-22", "pay", paymentMethod="bank_transfer"),
        ),
    ),
    Task(
        "Q10",
        "three approved requests: a frozen period and a blocked supplier",
        "buyer",
        "Place the orders for the approved purchase requests {pr-11}, {pr-12} and {pr-13}, "
        "each for the earliest delivery date its supplier offers. Leave any that cannot be "
        "ordered now and say why.",
        tuple(_earliest_delivery(key) for key in ("pr-11", "pr-12", "pr-13")),
        _all(
            _status("pr-11", "ordered"),
            _status("pr-12", "approved"),
            _status("pr-13", "approved"),
        ),
    ),
    Task(
        "Q11",
        "a partial receipt, then the claim for what is missing",
        "receiving_clerk",
        "The delivery for purchase request {pr-16} came in short: 38 of its 40 units "
        'arrived. Record the receipt of those 38, then file a claim "2 units missing" for '
        "the rest.",
        (
            act("receive", "pr-16", {"quantity": 38}),
            act("file_claim", "pr-16", {"description": "2 units missing"}),
        ),
        _all(
            _status("pr-16", "received"),
            _field("pr-16", "received_quantity", 38),
            _field("pr-16", "claim", "2 units missing"),
        ),
    ),
    Task(
        "Q12",
        "a recall that applies to one of two receipts",
        "receiving_clerk",
        "Check the received goods of purchase requests {pr-18} and {pr-19}: return any "
        'whose supplier has an open product recall, with the note "Supplier recall". '
        "Leave the others as they are.",
        (
            act("recall", "pr-18", {"note": "Supplier recall"}),
            act("recall", "pr-19", {"note": "Supplier recall"}),
        ),
        _all(_flags("pr-18", recalled=True), _flags("pr-19", recalled=False)),
    ),
    Task(
        "Q13",
        "pay the invoice that matches, dispute the one that does not",
        "accounts_payable",
        "The invoices of purchase requests {pr-20} and {pr-21} are due. Pay each one whose "
        "invoice matches what was received, by bank transfer; send any other back to the "
        'supplier by disputing it, with the reason "Amount differs from goods received".',
        (
            act("pay", "pr-20", {"paymentMethod": "bank_transfer"}),
            act("pay", "pr-21", {"paymentMethod": "bank_transfer"}),
            act("dispute_invoice", "pr-20", {"reason": "Amount differs from goods received"}),
            act("dispute_invoice", "pr-21", {"reason": "Amount differs from goods received"}),
        ),
        _all(
            _status("pr-20", "paid"),
            _performed("pr-20", "pay", paymentMethod="bank_transfer"),
            _performed("pr-20", "dispute_invoice", times=0),
            _status("pr-21", "received"),
            _performed("pr-21", "dispute_invoice"),
            _performed("pr-21", "pay", times=0),
        ),
    ),
    Task(
        "Q14",
        "an approval the budget forbids: send it back instead",
        "approver",
        "Decide purchase request {pr-07} (a trade fair booth): approve it if you may; if you "
        "may not approve it now, send it back to its requester with the note "
        '"Please revise: it cannot be approved as it stands."',
        (
            act("approve", "pr-07"),
            act(
                "request_changes",
                "pr-07",
                {"note": "Please revise: it cannot be approved as it stands."},
                only_if={"status": "submitted"},
            ),
        ),
        _all(
            _status("pr-07", "draft"),
            _performed("pr-07", "approve", times=0),
            _performed(
                "pr-07",
                "request_changes",
                note="Please revise: it cannot be approved as it stands.",
            ),
        ),
    ),
    Task(
        "Q15",
        "withdraw two requests; one is too far along",
        "rita",
        "Withdraw your purchase requests {pr-09} and {pr-12} if they can still be "
        "withdrawn; for any that cannot, leave it and say why.",
        (act("withdraw", "pr-09"), act("withdraw", "pr-12")),
        _all(
            _status("pr-09", "withdrawn"),
            _status("pr-12", "approved"),
            # already_approved: the goal never says how far it got.
            _reason("already_approved"),
        ),
    ),
)


def _report_of(c: Check, username: str) -> None:
    from procurement.models import PurchaseRequest

    c.expect_report(list(PurchaseRequest.objects.filter(requester__username=username)))
