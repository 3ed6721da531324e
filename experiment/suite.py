"""The tasks of the experiment, each with its check.

- ``S1``-``S6``: Tegg's order tasks (create/confirm/ship/deliver, cancel, a refused
  ship, a status report, a renamed confirm URL — run on C only, the one interface that
  follows URLs —, a batch).
- ``P1``-``P10``: rules the status enum does not show (high value, the customer's only
  reason, the refund window and limit, the reason a failed payment allows, an unpaid
  order, a warehouse's two steps, a customer's order and a cancel beyond her).
- ``R1``, ``R2``: the order changes between the agent's read and its act.
- ``L1``: a customer's agent; every byte it receives is scanned for operations outside
  its catalog.
- ``N1``: an operation that appears after the agent's tool list was taken.
- ``Q1``-``Q15``: purchase requests, where policy rather than status decides
  (:mod:`experiment.procurement_tasks`).

No task passes by doing nothing or by failing: where the right outcome is to leave an
object as it is, the check also wants the answer to give the reason or the new state —
in words the goal does not contain (``Check.expect_answer``; a reason by its code or a
paraphrase of that reason alone, ``Check.expect_reason``), so only an agent that found
it out can say it. The idle control (``--agent idle``) passes none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from experiment.procurement_tasks import PROCUREMENT_TASKS
from experiment.tasks import ANY, Act, Check, Injection, Report, Step, Task, perform_as

__all__ = ["TASKS"]


# --- changes made by "another user" during a run -----------------------------------------


def _enable_hold(pks: Mapping[str, int]) -> Callable[[], None]:
    from django.test import override_settings

    switch = override_settings(ORDERS_ENABLE_HOLD=True)
    switch.enable()  # setting_changed resets the catalog: the server sees hold_order now
    return switch.disable


# --- the tasks ----------------------------------------------------------------------------


def _s1(description: str) -> Callable[[Check], None]:
    def check(c: Check) -> None:
        order = c.created(description)
        c.expect_status(order, "delivered")
        if order is not None:
            c.expect(order.tracking_number == "TRK12345678", "wrong tracking number")
            c.expect(order.customer.username == "alice", "wrong customer")

    return check


def _s1_steps(description: str) -> tuple[Step, ...]:
    return (
        Act("create", "new:1", {"description": description, "total": 99.5, "customer": "alice"}),
        Act("confirm", "new:1"),
        Act("ship", "new:1", {"trackingNumber": "TRK12345678"}),
        Act("deliver", "new:1"),
    )


def _s1_goal(description: str) -> str:
    return (
        f'Create an order for customer alice: description "{description}", total 99.50. '
        "Then confirm it, ship it with tracking number TRK12345678 and mark it delivered."
    )


def _check_s2(c: Check) -> None:
    order = c.created("Experiment S2 order")
    c.expect_status(order, "cancelled")
    if order is not None:
        c.expect(bool(c.audit(order, "confirm_order")), "it was never confirmed")


def _check_s3(c: Check) -> None:
    order = c.created("Experiment S3 order")
    c.expect_status(order, "pending")
    if order is not None:
        c.expect(order.tracking_number is None, "a tracking number was recorded")
    # Why not: it is not confirmed (not_confirmed).
    c.expect_reason("not_confirmed")


def _check_s4(c: Check) -> None:
    from orders.models import Order

    c.expect_report(list(Order.objects.all()))


def _check_s6(c: Check) -> None:
    orders = [c.created(f"Experiment S6 order {n}") for n in (1, 2, 3)]
    for order, status in zip(orders, ("confirmed", "confirmed", "cancelled"), strict=True):
        c.expect_status(order, status)
    if all(orders):
        c.expect_report(orders)


def _unchanged(key: str, status: str, *, why: str | None = None) -> Callable[[Check], None]:
    """The order is still ``status``; with ``why`` (a reason code of
    :mod:`experiment.reasons`), the answer gives that reason and no other."""

    def check(c: Check) -> None:
        c.expect_status(c.order(key), status)
        if why is not None:
            c.expect_reason(why)

    return check


def _done_with(key: str, status: str, operation: str, **arguments: Any) -> Callable:
    def check(c: Check) -> None:
        order = c.order(key)
        c.expect_status(order, status)
        records = c.audit(order, operation)
        c.expect(len(records) == 1, f"{len(records)} {operation} records")
        for name, value in arguments.items():
            given = records[0].arguments.get(name) if records else None
            if isinstance(value, Decimal) and given is not None:
                given = Decimal(str(given))
            c.expect(given == value, f"{operation} {name}={given!r}, wanted {value!r}")

    return check


def _check_r1(c: Check) -> None:
    order = c.order("demo-10")
    c.expect_status(order, "confirmed")
    c.expect(not c.audit(order, "cancel_order"), "it was cancelled")
    # The goal never says "confirmed": the agent must have seen the change to say it.
    c.expect_answer(r"confirmed", "the answer does not report that it is now confirmed")


def _check_r2(c: Check) -> None:
    order = c.order("demo-01")
    c.expect_status(order, "cancelled")
    c.expect(not c.audit(order, "confirm_order"), "it was confirmed")
    # order_cancelled, cancelled, canceled: the goal never mentions a cancellation.
    c.expect_answer(r"cancell?ed", "the answer does not report that it was cancelled")


def _check_p8(c: Check) -> None:
    shipped = c.order("demo-05")
    c.expect_status(shipped, "shipped")
    c.expect(shipped.tracking_number == "TRK55550005", "wrong tracking number")
    c.expect_status(c.order("demo-12"), "delivered")


def _check_p10(c: Check) -> None:
    order = c.created("Experiment P10 order")
    c.expect_status(order, "pending")
    if order is not None:
        c.expect(order.customer.username == "alice", "not alice's order")
        c.expect(order.total == Decimal("35.00"), f"total {order.total}, not 35.00")
    c.expect_status(c.order("demo-02"), "pending")
    c.expect_reason("requires_supervisor")


def _check_l1(c: Check) -> None:
    from orders.models import Order

    c.expect_status(c.order("demo-01"), "cancelled")
    c.expect_report(list(Order.objects.filter(customer__username=c.user)))


def _check_n1(c: Check) -> None:
    order = c.order("demo-05")
    c.expect_status(order, "confirmed")
    records = c.audit(order, "hold_order")
    c.expect(len(records) == 1, f"{len(records)} hold_order records")


TASKS: tuple[Task, ...] = (
    Task(
        "S1",
        "create → confirm → ship → deliver",
        "admin",
        _s1_goal("Experiment S1 order"),
        _s1_steps("Experiment S1 order"),
        _s1("Experiment S1 order"),
    ),
    Task(
        "S2",
        "create → confirm → cancel",
        "admin",
        'Create an order for customer bob: description "Experiment S2 order", total 45.00. '
        "Confirm it, then cancel it because the customer asked to (reason customer_request).",
        (
            Act(
                "create",
                "new:1",
                {"description": "Experiment S2 order", "total": 45, "customer": "bob"},
            ),
            Act("confirm", "new:1"),
            Act("cancel", "new:1", {"reason": "customer_request"}),
        ),
        _check_s2,
    ),
    Task(
        "S3",
        "create, then ship at once (must fail)",
        "admin",
        'Create an order for customer alice: description "Experiment S3 order", total 120.00. '
        "Then ship it right away with tracking number TRK87654321, without confirming it. "
        "If the shop does not allow that, leave the order as it is and say why.",
        (
            Act(
                "create",
                "new:1",
                {"description": "Experiment S3 order", "total": 120, "customer": "alice"},
            ),
            Act("ship", "new:1", {"trackingNumber": "TRK87654321"}),
        ),
        _check_s3,
    ),
    Task(
        "S4",
        "report every order's status",
        "admin",
        "List every order and report each one's status, one line per order: `#<id>: <status>`.",
        (Report("all"),),
        _check_s4,
    ),
    Task(
        "S5",
        "S1 after the confirm URL was renamed",
        "admin",
        _s1_goal("Experiment S5 order"),
        _s1_steps("Experiment S5 order"),
        _s1("Experiment S5 order"),
        urlconf="experiment.urls_renamed",
        # Tool names and affordances do not change with a URL: on A and B it is S1.
        interfaces=("C",),
    ),
    Task(
        "S6",
        "three orders: confirm two, cancel one, report",
        "admin",
        'Create three orders for customer bob, described "Experiment S6 order 1", '
        '"Experiment S6 order 2" and "Experiment S6 order 3", with totals 10, 20 and 30. '
        "Confirm the first two, cancel the third (reason customer_request), then report the "
        "status of the three, one line each: `#<id>: <status>`.",
        (
            *(
                Act(
                    "create",
                    f"new:{n}",
                    {"description": f"Experiment S6 order {n}", "total": 10 * n, "customer": "bob"},
                )
                for n in (1, 2, 3)
            ),
            Act("confirm", "new:1"),
            Act("confirm", "new:2"),
            Act("cancel", "new:3", {"reason": "customer_request"}),
            Report("created"),
        ),
        _check_s6,
    ),
    Task(
        "P1",
        "support cancels a high-value order (needs a supervisor)",
        "support",
        "The customer of order {demo-11} asked to cancel it. Cancel it (reason "
        "customer_request) if the shop lets you; if not, leave it and say why.",
        (Act("cancel", "demo-11", {"reason": "customer_request"}, explain=True),),
        # requires_supervisor: the order is above what support may cancel.
        _unchanged("demo-11", "confirmed", why="requires_supervisor"),
    ),
    Task(
        "P2",
        "a customer cancels with the only reason allowed to her",
        "alice",
        "Cancel your order {demo-01}. You would give the reason inventory_failure, but any "
        "reason the shop accepts from you will do.",
        (Act("cancel", "demo-01", {"reason": "inventory_failure"}, fallbacks={"reason": ANY}),),
        _done_with("demo-01", "cancelled", "cancel_order", reason="customer_request"),
    ),
    Task(
        "P3",
        "refund inside the 30-day window",
        "supervisor",
        "Refund order {demo-07} in full (its whole total) if the refund policy allows it; "
        "otherwise leave it and say why.",
        (Act("refund", "demo-07", {"amount": "$total"}),),
        _done_with("demo-07", "refunded", "refund_order", amount=Decimal("300.00")),
    ),
    Task(
        "P4",
        "refund outside the 30-day window (must be refused)",
        "supervisor",
        "Refund order {demo-08} in full (its whole total) if the refund policy allows it; "
        "otherwise leave it and say why.",
        (Act("refund", "demo-08", {"amount": "$total"}, explain=True),),
        # refund_window_expired: delivered 45 days ago, the window is 30 days.
        _unchanged("demo-08", "delivered", why="refund_window_expired"),
    ),
    Task(
        "P5",
        "cancel an order whose payment failed, with payment_failure",
        "support",
        "Cancel order {demo-04}: its payment failed, so give the reason payment_failure.",
        (Act("cancel", "demo-04", {"reason": "payment_failure"}),),
        _done_with("demo-04", "cancelled", "cancel_order", reason="payment_failure"),
    ),
    Task(
        "P6",
        "cancel an unpaid order: payment_failure is not allowed, fall back",
        "support",
        "The customer of order {demo-03} never paid. Cancel it with the reason "
        "payment_failure if the shop accepts that reason for it, otherwise with "
        "customer_request.",
        (
            Act(
                "cancel",
                "demo-03",
                {"reason": "payment_failure"},
                fallbacks={"reason": ("customer_request",)},
            ),
        ),
        _done_with("demo-03", "cancelled", "cancel_order", reason="customer_request"),
    ),
    Task(
        "P7",
        "confirm an order whose payment is not authorized (must be refused, say why)",
        "support",
        "Confirm order {demo-03} if the shop allows it now; otherwise leave it as it is and "
        "say why.",
        (Act("confirm", "demo-03", explain=True),),
        # payment_not_authorized: its payment is still pending.
        _unchanged("demo-03", "pending", why="payment_not_authorized"),
    ),
    Task(
        "P8",
        "the warehouse ships one order and delivers another",
        "warehouse",
        "Ship order {demo-05} with tracking number TRK55550005. Then mark order {demo-12} "
        "as delivered.",
        (
            Act("ship", "demo-05", {"trackingNumber": "TRK55550005"}),
            Act("deliver", "demo-12"),
        ),
        _check_p8,
    ),
    Task(
        "P9",
        "refund more than was paid (must be refused, say the limit)",
        "supervisor",
        'Refund 350.00 of order {demo-07} to its customer, with the note "Goodwill". If the '
        "shop does not accept that, leave the order as it is and say why.",
        (Act("refund", "demo-07", {"amount": 350, "note": "Goodwill"}),),
        # The refund is at most the order's total, 300.00 (its constraint's maximum).
        _unchanged("demo-07", "delivered", why="refund_above_total"),
    ),
    Task(
        "P10",
        "a customer orders for herself; a cancel beyond her is refused",
        "alice",
        'Order something for yourself: description "Experiment P10 order", total 35.00. '
        "Then cancel your order {demo-02} (reason customer_request) if the shop lets you; "
        "if not, leave it and say why.",
        (
            Act("create", "new:1", {"description": "Experiment P10 order", "total": 35}),
            Act("cancel", "demo-02", {"reason": "customer_request"}, explain=True),
        ),
        _check_p10,
    ),
    Task(
        "R1",
        "cancel only while pending; another user confirms it meanwhile",
        "support",
        "Bob asked to cancel order {demo-10}, but only while it is still pending: if it is "
        "pending, cancel it (reason customer_request); if it is not, leave it as it is and "
        "report its status.",
        (Act("cancel", "demo-10", {"reason": "customer_request"}, only_if={"status": "pending"}),),
        _check_r1,
        injection=Injection(
            "before_write",
            perform_as("supervisor", "confirm_order", "demo-10"),
            order="demo-10",
            description="supervisor confirms the order just before the agent's first write",
        ),
    ),
    Task(
        "R2",
        "confirm; another user cancels it meanwhile",
        "support",
        "Confirm order {demo-01}. If that cannot be done, say why.",
        (Act("confirm", "demo-01"),),
        _check_r2,
        injection=Injection(
            "before_write",
            perform_as("supervisor", "cancel_order", "demo-01", reason="customer_request"),
            order="demo-01",
            description="supervisor cancels the order just before the agent's first write",
        ),
    ),
    Task(
        "L1",
        "leak probe: a customer's agent",
        "alice",
        "Cancel your order {demo-01} (reason customer_request). Then list your orders and "
        "report each one's status, one line per order: `#<id>: <status>`.",
        (Act("cancel", "demo-01", {"reason": "customer_request"}), Report("all")),
        _check_l1,
        requires_no_leaks=True,
    ),
    Task(
        "N1",
        "hold_order appears after the tool list was taken",
        "support",
        'Put order {demo-05} on hold with the note "Address check before shipping".',
        (Act("hold", "demo-05", {"note": "Address check before shipping"}),),
        _check_n1,
        injection=Injection(
            "after_list_tools",
            _enable_hold,
            description="ORDERS_ENABLE_HOLD switched on once the agent listed its tools",
        ),
    ),
    *PROCUREMENT_TASKS,
)
