"""What the load generator sends: valid arguments for an affordance, and which one to take.

Kept apart from the locust file (gevent) so the tests can check these arguments against
the real REST and MCP faces.
"""

from __future__ import annotations

import random
import string
from typing import Any

__all__ = ["arguments_for", "pick", "tracking_number"]


def tracking_number() -> str:
    return "".join(random.choices(string.ascii_uppercase + string.digits, k=12))


def arguments_for(
    affordance: dict[str, Any], order: dict[str, Any], *, money: type = str
) -> dict[str, Any]:
    """Valid arguments for an affordance: what the catalog needs, within its constraints.

    Money is spelled as the order shows it (``"60.00"``), which the REST action accepts
    (docs/protocol.md#execution); a tool's ``inputSchema`` types it as a number, so MCP passes
    ``money=float``.
    """
    name = affordance["name"]
    narrowed = affordance.get("constraints", {}).get("properties", {})
    if name == "ship_order":
        return {"trackingNumber": tracking_number()}
    if name == "cancel_order":
        allowed = narrowed.get("reason", {}).get("enum") or ["inventory_failure"]
        return {"reason": random.choice(allowed), "note": "load test"}
    if name == "refund_order":
        return {"amount": money(order["total"]), "note": "load test"}
    return {}


def pick(affordances: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Move orders along rather than cancel most of them at once."""
    if not affordances:
        return None
    onward = [a for a in affordances if a["name"] != "cancel_order"]
    if onward and random.random() < 0.85:
        return random.choice(onward)
    return random.choice(affordances)
