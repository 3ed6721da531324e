"""The DRF face of evaluation: ``affordances`` and ``unavailableAffordances`` (SPEC §5)."""

from __future__ import annotations

from typing import Any

from django.urls import NoReverseMatch, reverse

from affordances.catalog import get_catalog
from affordances.evaluation import Available, Unavailable, evaluate_permitted
from affordances.operations import Operation

__all__ = ["AffordancesMixin", "affordance_lists", "wants_affordances"]

_PK_PLACEHOLDER = "__affordances_pk__"


def wants_affordances(request: Any) -> bool:
    """``?affordances=none`` asks for the plain, static representation."""
    if request is None:
        return False
    params = getattr(request, "query_params", None) or getattr(request, "GET", {})
    return params.get("affordances") != "none"


class _Targets:
    """Per-request parts of affordances: URLs reversed once per operation, not per row."""

    def __init__(self, request: Any) -> None:
        self.request = request
        self._templates: dict[str, str | None] = {}
        self._static: dict[str, dict[str, Any]] = {}

    def static(self, operation: Operation) -> dict[str, Any]:
        """The parts of an affordance that do not depend on the object."""
        parts = self._static.get(operation.name)
        if parts is None:
            parts = self._static[operation.name] = {
                "operation": operation.urn,
                "name": operation.name,
                "title": operation.title,
                "method": operation.http_method,
            }
        return parts

    def url(self, operation: Operation, pk: Any) -> str | None:
        assert operation.method_name is not None
        if operation.name not in self._templates:
            try:
                path = reverse(
                    f"{operation.resource.basename}-{operation.method_name}",
                    kwargs={"pk": _PK_PLACEHOLDER},
                )
            except NoReverseMatch:
                path = None
            self._templates[operation.name] = (
                self.request.build_absolute_uri(path)
                if path is not None and self.request is not None
                else path
            )
        template = self._templates[operation.name]
        return template.replace(_PK_PLACEHOLDER, str(pk)) if template is not None else None


def affordance_lists(
    instance: Any,
    user: Any,
    *,
    operations: list[Operation],
    targets: _Targets,
    version_field: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The two lists for one object; ``operations`` are those the caller may know about."""
    available: list[dict[str, Any]] = []
    unavailable: list[dict[str, Any]] = []
    version = getattr(instance, version_field)
    for operation in operations:
        result = evaluate_permitted(operation, instance, user)
        if isinstance(result, Available):
            available.append(
                {
                    **targets.static(operation),
                    "target": targets.url(operation, instance.pk),
                    "arguments": {operation.resource.id_argument: instance.pk},
                    "constraints": result.constraints,
                    "validForVersion": version,
                }
            )
        elif isinstance(result, Unavailable):
            unavailable.append(
                {"operation": operation.urn, "name": operation.name, "reason": result.reason}
            )
    return available, unavailable


class AffordancesMixin:
    """Add to a ModelSerializer of a registered model.

    Needs ``request`` in the serializer context (DRF views provide it). The per-request
    work — the caller's transitions, URL templates — is cached in the shared context, so
    a list of N objects costs no query per object.
    """

    context: dict[str, Any]

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)  # type: ignore[misc]
        request = self.context.get("request")
        # The context may decide either way (True: the stored body of a run, whatever
        # ?affordances says); otherwise the request does.
        asked = self.context.get("affordances")
        if asked is False or (asked is not True and not wants_affordances(request)):
            return data
        state = self.context.get("_affordances")
        if state is None or state[0] is not type(instance):
            catalog = get_catalog()
            resource = catalog.resource_for(type(instance))
            user = getattr(request, "user", None)
            operations = [op for op in catalog.transitions_for(type(instance)) if op.permits(user)]
            state = (type(instance), resource, user, operations, _Targets(request))
            self.context["_affordances"] = state
        _, resource, user, operations, targets = state
        if resource is None:
            return data
        data["affordances"], data["unavailableAffordances"] = affordance_lists(
            instance,
            user,
            operations=operations,
            targets=targets,
            version_field=resource.version_field,
        )
        return data
