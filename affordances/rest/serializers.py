"""The DRF face of evaluation: ``affordances`` and ``unavailableAffordances`` (SPEC §5)."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse

from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate_in_state, refused_by_state
from affordances.operations import Holding, Operation
from affordances.representations import Shape, compact_entry
from affordances.resources import Resource

__all__ = ["AffordanceLists", "AffordancesMixin", "affordance_shape"]

_PK_PLACEHOLDER = "__affordances_pk__"


def affordance_shape(request: Any) -> Shape:
    """``?affordances=none`` asks for the plain, static representation, ``compact`` for
    entries without what the catalog says; no request, no affordances."""
    if request is None:
        return Shape.NONE
    params = getattr(request, "query_params", None) or getattr(request, "GET", {})
    return Shape.from_param(params.get("affordances"))


def _target_template(operation: Operation, request: Any) -> tuple[str, str] | None:
    """The operation's URL before and after the object's id (reversed once)."""
    assert operation.method_name is not None
    try:
        path = reverse(
            f"{operation.resource.basename}-{operation.method_name}",
            kwargs={"pk": _PK_PLACEHOLDER},
        )
    except NoReverseMatch:
        return None
    url = request.build_absolute_uri(path) if request is not None else path
    before, _, after = url.partition(_PK_PLACEHOLDER)
    return before, after


class AffordanceLists:
    """``affordances`` and ``unavailableAffordances`` of each object of one request.

    What does not depend on the object is worked out once, not once per row: the
    caller's operations (``operations``: those it may know about) and what it holds of
    each without an object, URL templates, the entries' fixed parts, and per state what
    the state alone decides (the refusals of the operations that state does not allow,
    to a caller who sees them on every object); each row reads its state once and
    evaluates only the operations its state leaves open, or whose permissions only the
    object can answer.
    """

    def __init__(
        self,
        request: Any,
        user: Any,
        resource: Resource,
        operations: list[Operation],
        *,
        compact: bool = False,
    ):
        self.user = user
        self.compact = compact
        self.version_field = resource.version_field
        self.id_argument = resource.id_argument
        self._operations = [
            (
                operation,
                self._shaped(
                    {
                        "operation": operation.urn,
                        "name": operation.name,
                        "title": operation.title,
                        "method": operation.http_method,
                    }
                ),
                _target_template(operation, request),
                operation.holding(user),
            )
            for operation in operations
        ]
        # The state fields of the operations (mostly one).
        self._fields = list({id(op.facts.field): op.facts.field for op in operations}.values())
        self._plans: dict[Any, list[_Step]] = {}

    def __call__(self, instance: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        available: list[dict[str, Any]] = []
        unavailable: list[dict[str, Any]] = []
        states = tuple(field.get_state(instance) for field in self._fields)
        plan = self._plans.get(states)
        if plan is None:
            plan = self._plans[states] = self._plan(states)
        pk = instance.pk
        version = getattr(instance, self.version_field)
        for operation, state, static, target, holding, refusal in plan:
            if refusal is not None:
                unavailable.append(dict(refusal))  # a copy per row: its reader may change it
                continue
            result = evaluate_in_state(operation, instance, self.user, state, holding=holding)
            if isinstance(result, Available):
                entry = {
                    **static,
                    "target": f"{target[0]}{pk}{target[1]}" if target else None,
                    "arguments": {self.id_argument: pk},
                    "constraints": result.constraints,
                    "validForVersion": version,
                }
                available.append(self._shaped(entry))
            elif isinstance(result, Unavailable):
                unavailable.append(self._refusal(operation, result.reason))
        return available, unavailable

    def _plan(self, states: tuple[Any, ...]) -> list[_Step]:
        """Each operation for an object in ``states``: its refusal when the state alone
        decides it, else None (the object decides)."""
        by_field = {id(field): state for field, state in zip(self._fields, states, strict=True)}
        plan = []
        for operation, static, target, holding in self._operations:
            state = by_field[id(operation.facts.field)]
            refused = refused_by_state(operation, state, holding)
            refusal = self._refusal(operation, refused.reason) if refused is not None else None
            plan.append((operation, state, static, target, holding, refusal))
        return plan

    def _shaped(self, entry: dict[str, Any]) -> dict[str, Any]:
        return compact_entry(entry) if self.compact else entry

    def _refusal(self, operation: Operation, reason: str) -> dict[str, Any]:
        return self._shaped({"operation": operation.urn, "name": operation.name, "reason": reason})


# An operation, its object's state, the entry's fixed part, the target URL around the
# object's id, what the caller holds of it without an object, and the refusal when the
# state alone decides it.
_Step = tuple[
    Operation, Any, dict[str, Any], tuple[str, str] | None, Holding, dict[str, Any] | None
]


class AffordancesMixin:
    """Add to a ModelSerializer of a registered model.

    Needs ``request`` in the serializer context (DRF views provide it). The per-request
    work — the caller's transitions, URL templates — is cached in the shared context, so
    a list of N objects costs no query per object.
    """

    context: dict[str, Any]

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)  # type: ignore[misc]
        state = self.context.get("_affordances")
        if state is None or state[0] is not type(instance):
            state = self.context["_affordances"] = self._per_request(type(instance))
        lists = state[1]
        if lists is not None:
            data["affordances"], data["unavailableAffordances"] = lists(instance)
        return data

    def _per_request(self, model: type) -> tuple[type, AffordanceLists | None]:
        """What every row of this request shares; None: no affordances."""
        request = self.context.get("request")
        # The context may decide (True: the stored body of a run, whatever ?affordances
        # says; False: none; a Shape); otherwise the request does.
        asked = self.context.get("affordances")
        if isinstance(asked, Shape):
            shape = asked
        elif isinstance(asked, bool):
            shape = Shape.FULL if asked else Shape.NONE
        else:
            shape = affordance_shape(request)
        if shape is Shape.NONE:
            return (model, None)
        catalog = get_catalog()
        resource = catalog.resource_for(model)
        if resource is None:
            return (model, None)
        user = getattr(request, "user", None)
        operations = [op for op in catalog.transitions_for(model) if op.permits(user)]
        lists = AffordanceLists(request, user, resource, operations, compact=shape is Shape.COMPACT)
        return (model, lists)
