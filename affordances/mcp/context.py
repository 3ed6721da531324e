"""What one MCP request knows: who asks, over which profile and revision, and how to
render an object the way the REST face renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import models
from rest_framework.request import Request

from affordances.catalog import get_catalog
from affordances.encoding import jsonable
from affordances.execution import normalize_pk
from affordances.problems import Problem
from affordances.resources import Resource

if TYPE_CHECKING:
    from affordances.mcp.profiles import Profile
    from affordances.mcp.protocol import Revision

__all__ = ["Context"]


@dataclass
class Context:
    # A DRF request around the MCP POST: serializers build absolute URLs from it (so
    # affordance targets equal REST's) and read the caller from it.
    request: Request
    user: Any
    profile: Profile
    revision: Revision
    _serializer_context: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def serializer_context(self) -> dict[str, Any]:
        # One dict per request: AffordancesMixin caches the caller's operations and URL
        # templates in it, so N objects cost no extra queries.
        if self._serializer_context is None:
            context: dict[str, Any] = {"request": self.request, "format": None, "view": None}
            if not self.profile.affordances:
                context["affordances"] = False
            self._serializer_context = context
        return self._serializer_context

    def represent(self, instance: models.Model) -> dict[str, Any]:
        """The resource representation of ``instance``, as REST serves it to this caller."""
        resource = get_catalog().resource_for(type(instance))
        serializer_class = resource.serializer_class if resource is not None else None
        if serializer_class is None:
            return {"id": instance.pk}
        return jsonable(serializer_class(instance, context=self.serializer_context).data)

    def represent_many(self, resource: Resource, instances: Any) -> list[dict[str, Any]]:
        if resource.serializer_class is None:
            return [{"id": instance.pk} for instance in instances]
        serializer = resource.serializer_class(
            instances, many=True, context=self.serializer_context
        )
        return jsonable(serializer.data)

    def visible(self, resource: Resource, pk: Any) -> models.Model:
        """The object ``pk`` if this caller may see it; hidden and missing look the same."""
        pk = normalize_pk(resource, pk)
        instance = resource.visible_queryset(self.user).filter(pk=pk).first()
        if instance is None:
            raise Problem.not_found()
        return instance

    def absolute(self, path: str) -> str:
        return self.request.build_absolute_uri(path)
