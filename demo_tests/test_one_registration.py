"""One registration drives every face, on the demo's orders: REST, MCP and ``perform``
see exactly the same objects for every role of docs/demo.md#orders (the library's own version, on
``tests.generic``'s ticket, is tests/test_one_registration.py).
"""

from __future__ import annotations

import pytest
from django.test import Client

from affordances.catalog import get_catalog
from affordances.execution import perform_create
from affordances.problems import Problem
from demo_tests.conftest import ROLES
from orders.models import Order
from tests.test_one_registration import _bearer, _mcp_ids, _performable, _rest_ids

# --- the demo: every role of docs/demo.md#orders --------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_rest_mcp_and_perform_see_the_same_orders_for_every_role(demo, role) -> None:
    user = demo.users[role]
    client = Client()
    headers = _bearer(user)
    rest = _rest_ids(client, "/api/orders/?page_size=5", headers)
    mcp = _mcp_ids(client, "/mcp", headers, "list_orders")
    assert rest == mcp

    everything = list(Order.objects.order_by("pk").values_list("pk", flat=True))
    transitions = [op for op in get_catalog().transitions_for(Order) if op.permits(user)]
    if transitions:
        assert _performable(transitions[0].name, user, everything) == rest
    else:
        # No capability at all (the auditor): perform acts on nothing, as for anyone.
        assert _performable("cancel_order", user, everything) == []
    if role in ("alice", "bob"):
        assert set(rest) == set(Order.objects.filter(customer=user).values_list("pk", flat=True))
    else:
        assert rest == everything


def test_may_not_create_is_the_cores_one_answer(demo) -> None:
    with pytest.raises(Problem) as refused:
        perform_create(
            operation=get_catalog().lookup("create_order"),
            user=demo.users["warehouse"],
            arguments={"description": "Tea", "total": "1"},
            via="api",
            represent=lambda obj: {"id": obj.pk},
        )
    assert (refused.value.status, refused.value.code) == (405, "method_not_allowed")
