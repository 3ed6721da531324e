"""What applies now, and how it is written: affordance entries and the representations
that carry them.

This is the one module that decides what an affordance entry looks like. Every face
takes its entries from here — REST (through :class:`affordances.rest.AffordancesMixin`),
MCP results, HAL-FORMS templates (built from the full entries) and the admin's panel and
change list. The shapes and the schemas that describe them are :mod:`affordances.shapes`'
(below the catalog, which describes representations with them); re-exported here.

A representation comes in one of three shapes:

- **full** (the default): affordance entries restate the catalog entry they come from
  (``operation`` URN, ``name``, ``title``, ``method``) besides what varies per object:
  ``target``, ``arguments`` (the bound id), ``constraints`` and ``validForVersion``;
  unavailable entries carry ``operation``, ``name`` and ``reason``;
- **compact** (``?affordances=compact``): only what varies — the catalog entry is
  referenced by its ``name`` (the MCP tool name), ``constraints`` are absent when
  nothing is narrowed; unavailable entries keep ``name`` and ``reason``;
- **plain** (``?affordances=none``): no affordance lists at all.

Execution stores the full representation (an idempotent replay answers "the stored
success"); each face answers it in its own shape with :func:`shaped`, so a key first
used on one face replays on another exactly as that face answers.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from contextlib import AbstractContextManager
from typing import Any, cast

from affordances import routes, tracing
from affordances.catalog import get_catalog
from affordances.conf import ANY_STATE
from affordances.declarations import DEFAULT_STATE_REASON
from affordances.evaluation import (
    Available,
    Checked,
    Constraints,
    InState,
    Unavailable,
    evaluate,
    evaluate_edit,
    overrides_get_state,
    read_state,
    refused_by_state,
)
from affordances.frozen import FrozenDict, FrozenList
from affordances.object_permissions import Ask, PageAnswers
from affordances.operations import Holding, Known, Operation
from affordances.resources import Resource
from affordances.shapes import (
    AFFORDANCE_LISTS,
    CATALOG_KEYS,
    Shape,
    list_schemas,
    shaped_schema,
)

__all__ = [
    "AFFORDANCE_LISTS",
    "CATALOG_KEYS",
    "AffordanceLists",
    "Shape",
    "attach",
    "compact_entry",
    "create_constraints",
    "list_schemas",
    "lists_for",
    "plain",
    "shaped",
    "shaped_schema",
    "with_affordances",
]

# -- entries in a shape -----------------------------------------------------------------


def compact_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """One affordance (or unavailable) entry without what the catalog already says."""
    return {
        key: value
        for key, value in entry.items()
        if key not in CATALOG_KEYS and not (key == "constraints" and value == {})
    }


def plain(representation: Any) -> Any:
    """``representation`` without ``affordances``/``unavailableAffordances``, at any depth."""
    if isinstance(representation, dict):
        return {
            key: plain(value)
            for key, value in representation.items()
            if key not in AFFORDANCE_LISTS
        }
    if isinstance(representation, list):
        return [plain(item) for item in representation]
    return representation


def _compact(representation: Any) -> Any:
    if isinstance(representation, dict):
        return {
            key: (
                [compact_entry(entry) for entry in value]
                if key in AFFORDANCE_LISTS and isinstance(value, list)
                else _compact(value)
            )
            for key, value in representation.items()
        }
    if isinstance(representation, list):
        return [_compact(item) for item in representation]
    return representation


def shaped(representation: Any, shape: Shape) -> Any:
    """A full representation (a stored body, say) in ``shape``, at any depth."""
    if shape is Shape.NONE:
        return plain(representation)
    if shape is Shape.COMPACT:
        return _compact(representation)
    return representation


# -- what applies now -------------------------------------------------------------------

# Each operation for the objects of one state: the refusal the state decides, or what
# the object is asked (the operation in that state), the entry's fixed part and the
# target URL around the object's id.
_Step = dict[str, Any] | tuple[InState, dict[str, Any], tuple[str, str] | None]


_UNREAD = object()
# Entries kept per operation and state with their constraints filled in, ready to copy:
# one per constraint spelling a request keeps (``constraints_for`` keeps 64).
_BASES_MAX = 64


class _Open:
    """An operation each object of one state is asked, and its entries' fixed part with
    the constraints filled in, per constraints object, in the entry's order: a row copies
    one and sets its target, its arguments and its version (a copy is half the cost of
    building one). ``constant_base``: the entry of every object, when the state and the
    caller decide already (held model-wide, no condition, guard or constraint)."""

    __slots__ = (
        "bases",
        "compact",
        "constant_base",
        "fixed",
        "in_state",
        "place",
        "prefix",
        "suffix",
    )

    def __init__(
        self,
        place: int,
        in_state: InState,
        fixed: dict[str, Any],
        target: tuple[str, str] | None,
        compact: bool,
    ) -> None:
        self.place = place
        self.in_state = in_state
        self.fixed = fixed
        # The target URL before and after the object's id (None: no route).
        self.prefix: str | None = target[0] if target is not None else None
        self.suffix: str | None = target[1] if target is not None else None
        self.compact = compact
        # By the constraints' spelling (Constraints.key): a stable key, not an object's id.
        self.bases: dict[bytes | str, FrozenDict] = {}
        simple = in_state.held and not in_state.conditions and not in_state.guards
        constant = in_state.unconstrained if simple else None
        self.constant_base = self.base(constant.constraints) if constant is not None else None

    def base(self, constraints: dict[str, Any]) -> FrozenDict:
        """The entry to copy for ``constraints``: kept by their spelling when the request
        keeps them (:class:`~affordances.evaluation.Constraints`), else made for the row."""
        key = constraints.key if isinstance(constraints, Constraints) else None
        if key is not None:
            known = self.bases.get(key)
            if known is not None:
                return known
        # In the shape's own order (compact_entry's for the compact one).
        entry = {**self.fixed, "target": None, "arguments": None}
        if constraints or not self.compact:
            entry["constraints"] = constraints
        entry["validForVersion"] = None
        base = FrozenDict(entry)
        if key is not None and len(self.bases) < _BASES_MAX:
            self.bases[key] = base
        return base


class _Plan:
    """The operations for the objects of one state, in the catalog's order: ``open``,
    those each object is asked, and ``refusals``, the unavailable list of an object that
    adds no refusal of its own (one list, shared by those rows)."""

    __slots__ = ("open", "places", "refusals")

    def __init__(self, steps: list[_Step], compact: bool) -> None:
        self.open = [
            _Open(place, step[0], step[1], step[2], compact)
            for place, step in enumerate(steps)
            if isinstance(step, tuple)
        ]
        self.refusals = FrozenList(step for step in steps if isinstance(step, dict))
        # Each place, with the state's refusal there (None: the object's own, if any).
        self.places = [
            (place, step if isinstance(step, dict) else None) for place, step in enumerate(steps)
        ]

    def merged(self, own: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
        """The unavailable list of an object with refusals of its own, in their places."""
        merged = []
        for place, refusal in self.places:
            if refusal is not None:
                merged.append(refusal)
            elif place in own:
                merged.append(own[place])
        return merged


class AffordanceLists:
    """``affordances`` and ``unavailableAffordances`` of each object of one request.

    What does not depend on the object is worked out once, not once per row: the
    caller's operations (of ``operations``, those it may know about) and what it holds of
    each without an object, URL templates, the entries' fixed parts, and per state what
    the state alone decides (the refusals of the operations that state does not allow,
    to a caller who sees them on every object); each row reads its state once and
    evaluates only the operations its state leaves open, or whose permissions only the
    object can answer. Each distinct constraint is checked once per request
    (:func:`affordances.evaluation.constraints_for`).

    What rows have in common is one object, shared by them: a refusal the state decides
    (a page of 100 rows of a 12-transition model held a thousand copies), the
    unavailable list of a state when no row of it adds a refusal of its own, a
    constraint spelled alike (``{}`` mostly), a row's ``arguments``. Fewer objects per
    row is less for the garbage collector to walk. What rows share is frozen
    (:mod:`affordances.frozen`: the state's refusals and their list, the constraints, a
    row's ``arguments``), so a change to it raises instead of reaching the other rows;
    the renderers encode them, HAL-FORMS, the compact shape and MCP build their own
    objects (:func:`shaped`, ``jsonable``), the admin reads them. What is a row's own (its
    ``affordances`` list and entries) is its own to change.
    """

    def __init__(
        self,
        request: Any,
        user: Any,
        resource: Resource,
        operations: list[Operation],
        *,
        shape: Shape = Shape.FULL,
        edit: Operation | None = None,
    ):
        self.user = user
        self.compact = shape is Shape.COMPACT
        self._resource_name = resource.name
        self._model_label = resource.model._meta.label
        # Asked once per request: the evaluations' spans (affordances.tracing), if any.
        self._traced = tracing.enabled()
        self.version_field = resource.version_field
        self.pk_attname = resource.model._meta.pk.attname
        self.id_argument = resource.id_argument
        # What the caller holds of each operation, asked once: an operation it may not
        # know about shows on no object (the catalog's rule, Operation.permits).
        known: Known = {}
        held = [(operation, operation.holding(user, known)) for operation in operations]
        self._operations = [
            (
                operation,
                self._shaped(
                    {
                        "operation": operation.urn,
                        "name": operation.name,
                        "title": operation.title,
                        "method": operation.http_method,
                        # Only when true, as in the catalog entry.
                        **(
                            {"confirmationRequired": True}
                            if operation.confirmation_required
                            else {}
                        ),
                    }
                ),
                routes.target_template(operation, request),
                holding,
            )
            for operation, holding in held
            if holding.anywhere
        ]
        # The state fields of the operations (mostly one).
        self._fields = list({op.facts.field: None for op, *_ in self._operations})
        self._plans: dict[Any, _Plan] = {}
        plain_state = len(self._fields) == 1 and not overrides_get_state(self._fields[0])
        self._state_key = self._fields[0].attname if plain_state else None
        self._checked: Checked = {}
        # Primary key of a prepared object → the object (the one asked for, not another
        # with its key) and its lists.
        self._ready: dict[Any, tuple[Any, tuple[list[dict[str, Any]], list[dict[str, Any]]]]]
        self._ready = {}
        # While a page is worked out: how its objects are asked for permissions.
        self._held: Ask | None = None
        # The model's edit (edit_{resource}), after the transitions: None when it has none
        # or the caller may not know about it.
        self._edit: _Edit | None = None
        if edit is not None:
            holding = edit.holding(user, known)
            if holding.anywhere:
                self._edit = _Edit(edit, holding, user, request, self._shaped, self.compact)

    def prepare(self, objects: list[Any]) -> None:
        """Work out the lists of ``objects`` (a page about to be written) all at once, for
        :meth:`__call__` to hand out: one loop over the page keeps this work's code and
        data in the CPU's caches, where a row at a time between the serializer's fields
        found them cold (a row's lists cost twice as much that way)."""
        ready, pk_attname = self._ready, self.pk_attname
        # What the caller holds on the page's objects, where they decide: each permission
        # asked once per object, a batching backend's at once (affordances.object_permissions).
        self._held = PageAnswers(self.user, objects).held
        try:
            if self._traced:
                with self._evaluation(len(objects)):
                    for instance in objects:
                        ready[getattr(instance, pk_attname)] = (instance, self._lists(instance))
                return
            for instance in objects:
                ready[getattr(instance, pk_attname)] = (instance, self._lists(instance))
        finally:
            self._held = None

    def __call__(self, instance: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        ready = self._ready.pop(getattr(instance, self.pk_attname, None), None)
        if ready is not None and ready[0] is instance:
            return ready[1]
        if self._traced:
            with self._evaluation(1):
                return self._lists(instance)
        return self._lists(instance)

    def _evaluation(self, objects: int) -> AbstractContextManager[None]:
        """The span of one evaluation: a page's objects at once, or one object."""
        return tracing.evaluation(
            self._resource_name,
            {
                "affordances.model": self._model_label,
                "affordances.objects": objects,
                "affordances.operations": len(self._operations),
            },
        )

    def _lists(self, instance: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        fields = self._fields
        if len(fields) == 1:
            # Where a loaded state is (read_state's rule, without a call per row).
            states: Any = instance.__dict__.get(self._state_key, _UNREAD)
            if states is _UNREAD:
                states = read_state(fields[0], instance)
        else:
            states = tuple(read_state(field, instance) for field in fields)
        plan = self._plans.get(states)
        if plan is None:
            plan = self._plans[states] = self._plan(states if len(fields) != 1 else (states,))
        available: list[dict[str, Any]] = []
        # The row's own refusals, by their place in the plan (mostly none).
        own: dict[int, dict[str, Any]] | None = None
        pk = getattr(instance, self.pk_attname)
        version = getattr(instance, self.version_field)
        arguments: dict[str, Any] | None = None  # the same for each entry of the row
        user, checked = self.user, self._checked
        # The page's answers (prepare()), or this object's own.
        held = self._held or PageAnswers(user, (instance,)).held
        for step in plan.open:
            base = step.constant_base  # the state and the caller decided already
            if base is None:
                result = step.in_state.evaluate(instance, user, checked, held)
                if type(result) is not Available:
                    if result is not None:
                        if own is None:
                            own = {}
                        refusal = cast(Unavailable, result)  # not None, not Available
                        own[step.place] = self._refusal(step.in_state.operation, refusal.reason)
                    continue
                base = step.base(result.constraints)
            if arguments is None:
                arguments = FrozenDict({self.id_argument: pk})
            entry = base.copy()
            prefix = step.prefix
            entry["target"] = f"{prefix}{pk}{step.suffix}" if prefix is not None else None
            entry["arguments"] = arguments
            entry["validForVersion"] = version
            available.append(entry)
        # The state's list, the same on every such row, unless the row adds its own.
        unavailable = plan.refusals if own is None else plan.merged(own)
        if self._edit is not None:
            return self._edit.add(instance, pk, version, available, unavailable, held)
        return available, unavailable

    def _plan(self, states: tuple[Any, ...]) -> _Plan:
        """Each operation for an object in ``states``: its refusal when the state alone
        decides it, else what the object is asked."""
        by_field = dict(zip(self._fields, states, strict=True))
        steps: list[_Step] = []
        for operation, static, target, holding in self._operations:
            state = by_field[operation.facts.field]
            refused = refused_by_state(operation, state, holding)
            if refused is not None:
                steps.append(self._refusal(operation, refused.reason))
            else:
                steps.append((InState(operation, state, holding), static, target))
        return _Plan(steps, self.compact)

    def _shaped(self, entry: dict[str, Any]) -> dict[str, Any]:
        return compact_entry(entry) if self.compact else entry

    def _refusal(self, operation: Operation, reason: str) -> FrozenDict:
        refusal = {"operation": operation.urn, "name": operation.name, "reason": reason}
        return FrozenDict(self._shaped(refusal))


class _Edit:
    """The edit's entries (``edit_{resource}``, :mod:`affordances.edits`): on an object
    the caller may change, available where the object's state leaves a declared field
    editable — its constraints ruling out the others — else refused as a state is. Its
    fixed part and its refusal are made once per request, and each narrowing once
    (the rows of a state share it); a row copies the one and shares the others."""

    __slots__ = (
        "always",
        "bases",
        "compact",
        "fixed",
        "holding",
        "operation",
        "prefix",
        "refusal",
        "suffix",
        "user",
    )

    def __init__(
        self,
        operation: Operation,
        holding: Holding,
        user: Any,
        request: Any,
        shaped: Callable[[dict[str, Any]], dict[str, Any]],
        compact: bool,
    ) -> None:
        self.operation = operation
        self.holding = holding
        self.user = user
        self.compact = compact
        # Held model-wide, with fields editable in every state (a list): available on
        # every object, without asking it, nothing narrowed.
        self.always = holding.everywhere and set(operation.resource.editable_fields) == {ANY_STATE}
        target = routes.target_template(operation, request)
        self.prefix: str | None = target[0] if target is not None else None
        self.suffix: str | None = target[1] if target is not None else None
        self.fixed = shaped(
            {
                "operation": operation.urn,
                "name": operation.name,
                "title": operation.title,
                "method": operation.http_method,
            }
        )
        # The entry to copy per narrowing (the declared fields it rules out).
        self.bases: dict[tuple[str, ...], dict[str, Any]] = {}
        self.refusal = FrozenDict(
            shaped(
                {"operation": operation.urn, "name": operation.name, "reason": DEFAULT_STATE_REASON}
            )
        )

    def _base(self, constraints: dict[str, Any]) -> dict[str, Any]:
        key = tuple(constraints.get("properties", ()))
        base = self.bases.get(key)
        if base is None:
            # In the entry's order, as a transition's (compact: constraints only if any).
            base = {**self.fixed, "target": None, "arguments": None}
            if constraints or not self.compact:
                base["constraints"] = constraints
            base["validForVersion"] = None
            self.bases[key] = base
        return base

    def add(
        self,
        instance: Any,
        pk: Any,
        version: Any,
        available: list[dict[str, Any]],
        unavailable: list[dict[str, Any]],
        held: Ask,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The row's lists with the edit's entry (``unavailable`` may be the state's, shared
        and frozen: a new list when it grows); ``held``: the page's answers on its objects."""
        constraints: dict[str, Any] = {}
        if not self.always:
            verdict = evaluate_edit(
                self.operation, instance, self.user, holding=self.holding, held=held
            )
            if verdict is None:
                return available, unavailable
            if type(verdict) is not Available:
                return available, [*unavailable, self.refusal]
            constraints = verdict.constraints
        entry = self._base(constraints).copy()
        prefix = self.prefix
        entry["target"] = f"{prefix}{pk}{self.suffix}" if prefix is not None else None
        entry["arguments"] = {self.operation.resource.id_argument: pk}
        entry["validForVersion"] = version
        available.append(entry)
        return available, unavailable


# Where a request's lists are kept in the cache a face hands in (a serializer context,
# an MCP call's context): one per model and shape.
_CACHE_KEY = "_affordances"


def lists_for(
    cache: MutableMapping[str, Any], request: Any, user: Any, model: type, shape: Shape
) -> AffordanceLists | None:
    """The lists of ``model``'s objects for this request in ``shape``, built once and
    kept in ``cache`` (which lives as long as the request); None: no affordances (the
    plain shape, or a model that is not registered)."""
    per_request: dict[tuple[type, Shape], AffordanceLists | None] | None = cache.get(_CACHE_KEY)
    if per_request is None:
        per_request = cache[_CACHE_KEY] = {}
    key = (model, shape)
    if key in per_request:
        return per_request[key]
    lists = None
    if shape is not Shape.NONE:
        catalog = get_catalog()
        resource = catalog.resource_for(model)
        if resource is not None:
            # The caller's operations: AffordanceLists keeps those it may know about.
            operations = catalog.transitions_for(model)
            edit = catalog.edit_for(model)
            lists = AffordanceLists(request, user, resource, operations, shape=shape, edit=edit)
    per_request[key] = lists
    return lists


def with_affordances(
    data: dict[str, Any],
    instance: Any,
    cache: MutableMapping[str, Any],
    request: Any,
    user: Any,
    shape: Shape,
) -> dict[str, Any]:
    """``data`` (an object's representation) with its affordance lists in ``shape``
    (none in the plain shape): what every face answers for an object."""
    return attach(data, instance, lists_for(cache, request, user, type(instance), shape))


def attach(data: dict[str, Any], instance: Any, lists: AffordanceLists | None) -> dict[str, Any]:
    """``data`` with ``instance``'s lists from ``lists`` (None: none, the plain shape)."""
    if lists is not None:
        data["affordances"], data["unavailableAffordances"] = lists(instance)
    return data


def operation_of(entry: dict[str, Any]) -> Operation:
    """The catalog operation an entry (in any shape) refers to."""
    operation = get_catalog().lookup(entry["name"])
    assert operation is not None, entry["name"]  # entries are written from the catalog
    return operation


def create_constraints(operation: Operation, user: Any) -> dict[str, Any] | None:
    """A collection's create affordance: its constraints for ``user`` when it applies,
    None when it does not (or the caller may not know about it)."""
    result = evaluate(operation, None, user)
    return result.constraints if isinstance(result, Available) else None
