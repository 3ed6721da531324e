"""What one MCP tool call knows: who asks, over which revision, and how to render an
object the way the REST face renders it to that caller."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from affordances import reads
from affordances.catalog import get_catalog
from affordances.encoding import jsonable
from affordances.mcp.transport.protocol import Revision
from affordances.representations import Shape, shaped
from affordances.resources import Resource

__all__ = ["Context"]


@dataclass
class Context:
    # A DRF request around the MCP POST: serializers build absolute URLs from it (so
    # affordance targets equal REST's) and read the caller from it.
    request: Any
    user: Any
    revision: Revision
    # Representations carry `affordances`/`unavailableAffordances` (SPEC §5), compact or not.
    affordances: bool = True
    compact: bool = False
    # 409/412 problems carry `current`, the object as it is now.
    problem_current: bool = True
    # Objects are MCP resources too (template, list, read, links from tool results).
    resources: bool = True
    page_size: int = 50
    _serializer_context: dict[str, Any] | None = field(default=None, repr=False)
    _full_context: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def shape(self) -> Shape:
        if not self.affordances:
            return Shape.NONE
        return Shape.COMPACT if self.compact else Shape.FULL

    @property
    def serializer_context(self) -> dict[str, Any]:
        # One dict per request: AffordancesMixin caches the caller's operations and URL
        # templates in it, so N objects cost no extra queries.
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
        data: dict[str, Any] = jsonable(serializer_class(instance, context=context).data)
        return data

    def represent_full(self, instance: models.Model) -> dict[str, Any]:
        return self.represent(instance, full=True)

    def shaped(self, body: dict[str, Any]) -> dict[str, Any]:
        """A stored (full) body as this profile answers it."""
        result: dict[str, Any] = shaped(body, self.shape)
        return result

    def represent_many(self, resource: Resource, instances: Any) -> list[dict[str, Any]]:
        if resource.serializer_class is None:
            return [{"id": instance.pk} for instance in instances]
        serializer = resource.serializer_class(
            instances, many=True, context=self.serializer_context
        )
        items: list[dict[str, Any]] = jsonable(serializer.data)
        return items

    def find(self, resource: Resource, pk: Any) -> models.Model:
        """The object ``pk`` if this caller may see it; hidden and missing look the same."""
        return reads.find(resource, self.user, pk)

    def absolute(self, path: str) -> str:
        return str(self.request.build_absolute_uri(path))
