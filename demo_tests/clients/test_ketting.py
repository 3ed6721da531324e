"""Ketting, the HAL-FORMS client, with its own default ``Accept`` header (q-values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo_tests.clients.conftest import last_json, run, token_for
from demo_tests.conftest import Demo
from orders.models import Order

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

KETTING_ACCEPT = (
    "application/prs.hal-forms+json;q=1.0, application/hal+json;q=0.9, "
    "application/vnd.api+json;q=0.8, application/vnd.siren+json;q=0.8, "
    "application/vnd.collection+json;q=0.8, application/json;q=0.7, text/html;q=0.6"
)


def test_ketting_follows_the_api_submits_a_form_and_a_stale_resubmit_is_412(
    live_server: Any, demo: Demo, tmp_path: Path
) -> None:
    token = token_for(demo.users["support"])
    done = run(["node", "ketting_flow.mjs", live_server.url, token], home=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = last_json(done.stdout)

    assert seen["accept"] == KETTING_ACCEPT  # its default, not ours
    assert seen["listingType"].startswith("application/prs.hal-forms+json")
    assert "cancel_order" in seen["actions"]
    fields = {name: (kind, value) for name, kind, value in seen["fields"]}
    assert fields["reason"][0] == "select"
    order = Order.objects.get(pk=int(seen["orderUrl"].rstrip("/").rsplit("/", 1)[-1]))
    assert fields["expectedVersion"] == ("hidden", str(order.version - 1))
    assert seen["submittedStatus"] == seen["freshStatus"] == "cancelled"
    assert order.status == "cancelled"
    assert seen["resubmitted"] == 412  # the form carried the version it was built for
