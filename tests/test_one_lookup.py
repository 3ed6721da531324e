# ruff: noqa: F811  (pytest fixtures imported from the visibility tests)
"""One lookup (issue 51): what an operation's name means for a caller is decided by
``Catalog.resolve`` for every face — the admin's operation pages, MCP's tools, the REST
routes and the catalog's own endpoint — so each refuses the same names alike: a URN
where a name is asked (only the catalog's endpoint takes one), another model's
operation, a create where a transition runs. Before, the admin took a URN in its URL.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from affordances.catalog import get_catalog
from tests.generic.claims import Claim, Policy
from tests.test_one_visibility import ADMIN, SHOWN, Caller, caller, project  # noqa: F401

REJECT_URN = "urn:example:operation:reject-claim:v1"


def test_resolve_is_the_rules_of_every_face(project: None) -> None:
    catalog = get_catalog()
    root = get_user_model().objects.create_superuser("boss", password="x")
    reject = catalog.lookup("reject_claim")
    assert reject is not None and reject.urn == REJECT_URN
    assert catalog.resolve("reject_claim", root) is reject
    assert catalog.resolve("reject_claim", root, model=Claim, transition=True) is reject
    # A URN only where the face takes one.
    assert catalog.resolve(REJECT_URN, root) is None
    assert catalog.resolve(REJECT_URN, root, urn=True) is reject
    # Another model's operation (and, as before, one whose capability the caller lacks).
    assert catalog.resolve("reject_claim", root, model=Policy) is None
    assert catalog.resolve("lapse_policy", root, model=Claim) is None
    assert catalog.resolve("no_such_operation", root) is None


@pytest.mark.parametrize("name", [REJECT_URN, "lapse_policy", "no_such_operation"])
def test_the_admin_refuses_a_name_it_does_not_run(caller: Caller, name: str) -> None:
    # The operation page of a claim answers to reject_claim only: its URN (a path
    # segment the URL pattern takes) is not found, as any name that is not this model's.
    assert caller.client.get(f"{ADMIN}/{SHOWN}/operation/reject_claim/").status_code == 200
    page = caller.client.get(f"{ADMIN}/{SHOWN}/operation/{name}/")
    assert page.status_code == 404


@pytest.mark.parametrize("name", [REJECT_URN, "no_such_operation"])
def test_mcp_refuses_a_tool_by_any_other_name(caller: Caller, name: str) -> None:
    answer = caller.mcp("tools/call", {"name": name, "arguments": {"claimId": SHOWN}})
    assert answer["error"]["code"] == -32602
    unknown = caller.mcp("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert answer["error"] == unknown["error"]


def test_the_catalog_endpoint_takes_a_name_or_its_urn(caller: Caller) -> None:
    by_name: Any = caller.api("get", "/api/operations/reject_claim/")
    by_urn: Any = caller.api("get", f"/api/operations/{REJECT_URN}/")
    assert by_name.status_code == by_urn.status_code == 200
    assert by_name.json() == by_urn.json()
