"""Helpers for a project's own tests.

:func:`assert_constraints` evaluates an operation's constraints function on the project's
own object and caller and asserts that it only narrows the operation's input schema, as
every request checks it (a widening constraint makes the operation unavailable, reason
``misconfigured``). The system check can probe a constraints function only on a sample
object (``affordances.W014`` when it cannot); this checks it where it runs::

    from affordances.testing import assert_constraints

    def test_payout_bounds(claim, adjuster):
        constraints = assert_constraints("pay_claim", claim, adjuster)
        assert constraints["properties"]["payoutDate"]["formatMinimum"] == "2025-01-01"
"""

from __future__ import annotations

from typing import Any

from affordances.catalog import get_catalog
from affordances.constraints import ConstraintWidens, assert_narrows

__all__ = ["assert_constraints"]


def assert_constraints(operation_name: str, instance: Any, user: Any) -> dict[str, Any]:
    """The constraints of the operation named ``operation_name`` (its name or URN) for
    ``instance`` (None for a create) and ``user``, once asserted to only narrow its input
    schema with keywords every face can show. Raises ``AssertionError`` saying what
    widens (or that no such operation is in the catalog); an exception the function
    raises propagates."""
    operation = get_catalog().lookup(operation_name)
    if operation is None:
        raise AssertionError(f"No operation {operation_name!r} in the catalog.")
    spec = operation.spec
    if spec is None or spec.constraints is None:
        return {}
    constraints = spec.constraints(instance, user) or {}
    try:
        assert_narrows(operation.input_schema, constraints)
    except ConstraintWidens as exc:
        raise AssertionError(
            f"The constraints of {operation.name} do not only narrow its input schema: {exc}."
        ) from exc
    return dict(constraints)
