"""The stable operation catalog: built once per process, filtered per caller.

The catalog depends on code and settings only, so it is built lazily on first use and
kept until ``AFFORDANCES`` changes. What a caller sees is the subset it has the
capability for — never a function of object state or of earlier requests.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from affordances import registry
from affordances.encoding import canonical_json
from affordances.operations import Known, Operation, build_operations
from affordances.resources import Resource, registered_resources

__all__ = ["Catalog", "build_catalog", "canonical_json", "get_catalog", "reset_catalog"]


@dataclass(frozen=True)
class Catalog:
    operations: tuple[Operation, ...]
    resources: tuple[Resource, ...]

    def __iter__(self) -> Iterator[Operation]:
        return iter(self.operations)

    @cached_property
    def _by_name(self) -> dict[str, Operation]:
        return {op.name: op for op in self.operations}

    @cached_property
    def _by_urn(self) -> dict[str, Operation]:
        return {op.urn: op for op in self.operations}

    @cached_property
    def documents(self) -> dict[str, dict[str, Any]]:
        """Each entry rendered once and reused by every request."""
        return {op.name: op.document() for op in self.operations}

    @cached_property
    def _document_hashes(self) -> dict[str, str]:
        return {
            name: hashlib.sha256(canonical_json(doc).encode()).hexdigest()
            for name, doc in self.documents.items()
        }

    def lookup(self, name_or_urn: str) -> Operation | None:
        return self._by_name.get(name_or_urn) or self._by_urn.get(name_or_urn)

    def resolve(
        self,
        name: str,
        user: Any,
        *,
        model: type | None = None,
        transition: bool = False,
        urn: bool = False,
    ) -> Operation | None:
        """The operation ``name`` means for ``user`` on a face, or None — which every face
        answers as its not-found, alike for an unknown name and one the caller may not
        know about: not an operation's name (nor its URN, where ``urn`` allows one: the
        catalog's own endpoint), not one of ``model``'s, not a transition where the face
        runs only transitions, or a capability the caller lacks. The one lookup of every
        face (the admin's pages, MCP's tools and forms, the REST routes and catalog)."""
        operation = self._by_name.get(name)
        if operation is None and urn:
            operation = self._by_urn.get(name)
        if operation is None:
            return None
        if model is not None and operation.resource.model is not model:
            return None
        if transition and not operation.is_transition:
            return None
        if not operation.permits(user):
            return None
        return operation

    def for_user(self, user: Any) -> list[Operation]:
        """The operations this caller may know about, in catalog order (each permission
        asked once: the operations of a model mostly share theirs)."""
        known: Known = {}
        return [op for op in self.operations if op.holding(user, known).anywhere]

    @cached_property
    def _by_model(self) -> dict[type, list[Operation]]:
        grouped: dict[type, list[Operation]] = {resource.model: [] for resource in self.resources}
        for op in self.operations:
            grouped[op.resource.model].append(op)
        return grouped

    @cached_property
    def _transitions_by_model(self) -> dict[type, list[Operation]]:
        return {
            model: [op for op in operations if op.is_transition]
            for model, operations in self._by_model.items()
        }

    @cached_property
    def _by_method(self) -> dict[tuple[type, str], Operation]:
        return {
            (op.resource.model, op.method_name): op
            for op in self.operations
            if op.is_transition and op.method_name is not None
        }

    @cached_property
    def _resources_by_model(self) -> dict[type, Resource]:
        return {resource.model: resource for resource in self.resources}

    def for_model(self, model: type) -> list[Operation]:
        return list(self._by_model.get(model, ()))

    def transitions_for(self, model: type) -> list[Operation]:
        return list(self._transitions_by_model.get(model, ()))

    def create_for(self, model: type) -> Operation | None:
        return next((op for op in self._by_model.get(model, ()) if op.is_create), None)

    def edit_for(self, model: type) -> Operation | None:
        """The model's ``edit_{resource}`` (None: its registration declares no
        ``EDITABLE_FIELDS``)."""
        return next((op for op in self._by_model.get(model, ()) if op.is_edit), None)

    def transition(self, model: type, method_name: str) -> Operation | None:
        return self._by_method.get((model, method_name))

    def resource_for(self, model: type) -> Resource | None:
        return self._resources_by_model.get(model)

    def registered(self, model: type) -> Resource:
        """The registration of a model a face was given; a clear error if there is none."""
        resource = self._resources_by_model.get(model)
        if resource is None:
            label = getattr(getattr(model, "_meta", None), "label", model.__name__)
            raise LookupError(f"{label} is not in AFFORDANCES['MODELS'].")
        return resource

    def etag(self, operations: list[Operation]) -> str:
        digest = hashlib.sha256()
        for op in operations:
            digest.update(self._document_hashes[op.name].encode())
        return f'"{digest.hexdigest()[:32]}"'


_lock = threading.Lock()
_catalog: Catalog | None = None


def build_catalog() -> Catalog:
    """A catalog of the current settings, built now and kept nowhere (system checks read
    this one: a check has no side effects)."""
    resources = registered_resources()
    operations: list[Operation] = []
    for resource in resources:
        operations.extend(build_operations(resource))
    return Catalog(operations=tuple(operations), resources=resources)


def get_catalog() -> Catalog:
    """The process's catalog, built on first use and kept until a setting changes."""
    global _catalog
    catalog = _catalog
    if catalog is None:
        with _lock:
            if _catalog is None:
                _catalog = build_catalog()
            catalog = _catalog
    return catalog


@registry.derived
def _forget_catalog() -> None:
    global _catalog
    with _lock:
        _catalog = None


def reset_catalog() -> None:
    """Forget the catalog and everything built from it (:func:`affordances.registry.reset`):
    the next use rebuilds them from the settings as they are."""
    registry.reset()
