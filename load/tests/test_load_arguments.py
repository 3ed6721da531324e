"""The load generator's arguments are valid on the faces it sends them to.

`make load` fails on any unexpected refusal; these tests catch a generator that no
longer matches the contract (a money string where a tool's ``inputSchema`` wants a
number, say) without starting gunicorn and locust.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.test import override_settings
from rest_framework.test import APIClient

from demo_tests.conftest import Demo
from demo_tests.test_mcp_http import token_for
from load.arguments import arguments_for
from load.run import server_environment
from orders.models import Order
from tests.mcp_wire import Wire

STAFF = ("support", "warehouse", "supervisor")


class _Undo(Exception):
    """Raised to roll back one attempted transition, so every one starts from the seed."""


def attempt(run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        with transaction.atomic():
            outcome = run(*args, **kwargs)
            raise _Undo(outcome)
    except _Undo as undo:
        return undo.args[0]


@pytest.mark.django_db
@pytest.mark.parametrize("role", STAFF)
def test_every_affordance_is_accepted_over_rest_with_the_generators_arguments(
    demo: Demo, api: Callable[[str], APIClient], role: str
) -> None:
    client = api(role)
    tried = 0
    for pk in Order.objects.values_list("pk", flat=True):
        order = client.get(f"/api/orders/{pk}/").json()
        for affordance in order.get("affordances", []):
            body = arguments_for(affordance, order)
            headers = {"If-Match": f'"{order["version"]}"'}
            response = attempt(
                client.post, affordance["target"], body, format="json", headers=headers
            )
            assert response.status_code == 200, (affordance["name"], body, response.json())
            tried += 1
    assert tried > 0


def test_the_load_server_asks_no_confirmation() -> None:
    # No person is behind the generator (docs/protocol.md#confirmations): its server runs
    # with AFFORDANCES["CONFIRMATIONS"] False, as the MCP test below does.
    probe = "from config import settings; print(settings.AFFORDANCES['CONFIRMATIONS'])"
    env = server_environment("sqlite:///load.sqlite3")
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


@pytest.mark.django_db
@pytest.mark.parametrize("role", STAFF)
@override_settings(AFFORDANCES={**settings.AFFORDANCES, "CONFIRMATIONS": False})
def test_every_affordance_is_accepted_over_mcp_with_the_generators_arguments(
    demo: Demo, role: str
) -> None:
    wire = Wire(token_for(demo, role))
    tried = set()
    for pk in Order.objects.values_list("pk", flat=True):
        result = wire.tool("get_order", {"orderId": pk})
        if result.get("isError"):
            continue
        order = result["structuredContent"]
        for affordance in order["affordances"]:
            arguments = {
                **affordance["arguments"],
                **arguments_for(affordance, order, money=float),
                "expectedVersion": affordance["validForVersion"],
            }
            outcome = attempt(wire.tool, affordance["name"], arguments)
            assert not outcome.get("isError"), (affordance["name"], arguments, outcome)
            tried.add(affordance["name"])
    assert tried
