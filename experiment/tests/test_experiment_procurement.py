"""The experiment's purchase-request tasks (Q1-Q10), run for real with the scripted agents.

Policy decides there, not the status: scripted B acts only on what the affordances
offer and never makes an invalid transition; scripted A, which sees the status and the
static tool list only, is refused by rules it could not see.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from affordances.catalog import get_catalog
from affordances.models import AuditRecord
from demo_tests.conftest import Demo
from experiment.metrics import forbidden_traces
from experiment.procurement_tasks import PROCUREMENT_TASKS, Q1_TITLE
from experiment.runner import Config, run_experiment
from procurement.models import PurchaseRequest

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

Q_TASKS = tuple(task.id for task in PROCUREMENT_TASKS)


def run(live_server: Any, **config: Any) -> list[dict[str, Any]]:
    return run_experiment(Config(**config), base_url=live_server.url, log=lambda line: None)["runs"]


def test_there_are_at_least_eight_q_tasks_and_one_chain_of_ten_steps() -> None:
    assert len(Q_TASKS) >= 8
    [q1] = [task for task in PROCUREMENT_TASKS if task.id == "Q1"]
    steps = [*q1.steps, *(step for phase in q1.phases for step in phase.steps)]
    assert len(steps) >= 10
    assert len(set(q1.users)) == 5


def test_scripted_b_does_every_q_task_without_an_invalid_transition(
    live_server: Any, demo: Demo
) -> None:
    runs = run(live_server, tasks=Q_TASKS, interfaces=("B",))

    assert sorted(r["task"] for r in runs) == sorted(Q_TASKS)
    for r in runs:
        assert r["success"], (r["task"], r["failures"])
        assert r["invalidTransitions"] == 0, (r["task"], r["refusals"])
        assert r["leaks"] == 0
    by_task = {r["task"]: r for r in runs}
    # Q7: the cancel between read and write is a stale version, recovered by reading again.
    assert (by_task["Q7"]["staleConflicts"], by_task["Q7"]["staleRecovered"]) == (1, 1)
    assert by_task["Q1"]["sessions"] == 7


def test_q1s_chain_is_ten_writes_by_five_users(live_server: Any, demo: Demo) -> None:
    [result] = run(live_server, tasks=("Q1",), interfaces=("B",))

    assert result["success"], result["failures"]
    request = PurchaseRequest.objects.get(title=Q1_TITLE)
    records = AuditRecord.objects.filter(object_id=str(request.pk)).order_by("id")
    records = [r for r in records if r.operation_name.endswith("_purchase_request")]
    assert [r.operation_name.removesuffix("_purchase_request") for r in records] == [
        "create",
        "submit",
        "request_changes",
        "attach_quote",
        "submit",
        "approve",
        "order",
        "receive",
        "invoice",
        "pay",
    ]
    users = get_user_model().objects.filter(pk__in=[r.user_id for r in records])
    assert sorted(users.values_list("username", flat=True)) == [
        "accounts_payable",
        "approver",
        "buyer",
        "receiving_clerk",
        "rita",
    ]
    assert {r.via for r in records} == {"mcp"}


def test_scripted_a_is_refused_by_policies_the_status_does_not_show(
    live_server: Any, demo: Demo
) -> None:
    runs = run(live_server, tasks=("Q2", "Q5", "Q9", "Q10"), interfaces=("A",))
    refusals = {r["task"]: r["refusals"] for r in runs}

    assert refusals["Q2"] == [
        "approve_purchase_request: operation_not_available (over_approval_limit)",
        "approve_purchase_request: operation_not_available (own_request)",
        "approve_purchase_request: operation_not_available (supplier_blocked)",
    ]
    assert refusals["Q5"] == [
        "approve_purchase_request: operation_not_available (budget_exhausted)"
    ]
    assert "pay_purchase_request: operation_not_available (invoice_mismatch)" in refusals["Q9"]
    assert "pay_purchase_request: validation_error" in refusals["Q9"]  # card beyond its limit
    q10 = refusals["Q10"]
    assert "order_purchase_request: operation_not_available (period_frozen)" in q10
    assert "order_purchase_request: operation_not_available (supplier_blocked)" in q10
    # What B does and A cannot: the delivery dates offered are narrowed per request.
    assert "order_purchase_request: validation_error" in q10
    assert sum(r["invalidTransitions"] for r in runs) >= 7


def test_the_requesters_leak_probe_would_see_a_payment_operation(demo: Demo) -> None:
    from procurement.demo import DEMO_USERS, seed_procurement_users

    seed_procurement_users(password="unused-password-1")
    rita = get_user_model().objects.get(username="rita")
    assert "rita" in DEMO_USERS
    hidden = [op for op in get_catalog() if not op.permits(rita)]
    allowed = [op for op in get_catalog() if op.permits(rita)]
    traces = forbidden_traces(hidden, allowed)

    for payment in ("pay_purchase_request", "Pay invoice", "/pay/", "approve_purchase_request"):
        assert payment in traces
    assert "submit_purchase_request" not in traces
