"""What one MCP tool call knows: who asks, over which revision, and how to render an
object the way the REST face renders it to that caller."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from affordances import reads
from affordances.catalog import get_catalog
from affordances.encoding import jsonable
from affordances.entries import AFFORDANCE_LISTS, Shape, shaped, with_affordances
from affordances.mcp.transport.protocol import Revision
from affordances.resources import Resource

__all__ = ["Context"]


@dataclass
class Context:
    # A DRF request around the MCP POST: serializers build absolute URLs from it (so
    # affordance targets equal REST's) and read the caller from it.
    request: Any
    user: Any
    revision: Revision
    # Representations carry `affordances`/`unavailableAffordances`, compact or not
    # (docs/protocol.md#affordances, docs/protocol.md#compact).
    affordances: bool = True
    compact: bool = False
    # 409/412 problems carry `current`, the object as it is now.
    problem_current: bool = True
    # Objects are MCP resources too (template, list, read, links from tool results).
    resources: bool = True
    page_size: int = 50
    # A 2026-07-28 tools/call's answer to a form it was asked, and the sealed state it
    # echoes (affordances.mcp.confirmations); None on earlier revisions.
    input_responses: Any = None
    request_state: Any = None
    _serializer_context: dict[str, Any] | None = field(default=None, repr=False)
    _full_context: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def shape(self) -> Shape:
        if not self.affordances:
            return Shape.NONE
        return Shape.COMPACT if self.compact else Shape.FULL

    @property
    def serializer_context(self) -> dict[str, Any]:
        # One dict per request: the caller's operations and URL templates are kept in
        # it (affordances.entries), so N objects cost no extra queries.
        if self._serializer_context is None:
            self._serializer_context = {
                "request": self.request,
                "format": None,
                "view": None,
                "affordances": self.shape,
            }
        return self._serializer_context

    def represent(self, instance: models.Model, *, full: bool = False) -> dict[str, Any]:
        """The resource representation of ``instance``, as REST serves it to this caller;
        ``full``: with affordances whatever the profile (the body a replay answers)."""
        resource = get_catalog().resource_for(type(instance))
        serializer_class = resource.serializer_class if resource is not None else None
        if serializer_class is None:
            return {"id": instance.pk}
        context = self.serializer_context
        if full and self.shape is not Shape.FULL:
            if self._full_context is None:
                self._full_context = {
                    "request": self.request,
                    "format": None,
                    "view": None,
                    "affordances": Shape.FULL,
                }
            context = self._full_context
        data: dict[str, Any] = serializer_class(instance, context=context).data
        represented: dict[str, Any] = jsonable(self._with_affordances(data, instance, context))
        return represented

    def represent_full(self, instance: models.Model) -> dict[str, Any]:
        return self.represent(instance, full=True)

    def shaped(self, body: dict[str, Any]) -> dict[str, Any]:
        """A stored (full) body as this profile answers it."""
        result: dict[str, Any] = shaped(body, self.shape)
        return result

    def represent_many(self, resource: Resource, instances: Any) -> list[dict[str, Any]]:
        if resource.serializer_class is None:
            return [{"id": instance.pk} for instance in instances]
        context = self.serializer_context
        instances = list(instances)
        data = resource.serializer_class(instances, many=True, context=context).data
        items: list[dict[str, Any]] = jsonable(
            [
                self._with_affordances(item, instance, context)
                for item, instance in zip(data, instances, strict=True)
            ]
        )
        return items

    def _with_affordances(
        self, data: dict[str, Any], instance: models.Model, context: dict[str, Any]
    ) -> dict[str, Any]:
        """The affordance lists, when the serializer did not write them itself (one that
        does not mix in the REST face's class): every profile answers them alike."""
        shape = context["affordances"]
        if shape is Shape.NONE or any(name in data for name in AFFORDANCE_LISTS):
            return data
        data = dict(data)
        return with_affordances(data, instance, context, self.request, self.user, shape)

    def find(self, resource: Resource, pk: Any) -> models.Model:
        """The object ``pk`` if this caller may see it; hidden and missing look the same."""
        return reads.find(resource, self.user, pk, request=self.request)

    def absolute(self, path: str) -> str:
        return str(self.request.build_absolute_uri(path))
