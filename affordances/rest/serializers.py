"""The DRF face of affordances: a serializer mixin that adds an object's affordance lists
(``affordances`` and ``unavailableAffordances``, written by :mod:`affordances.entries`)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from affordances import routes
from affordances.catalog import get_catalog
from affordances.entries import Shape, with_affordances

__all__ = ["AffordancesMixin", "ResourceUrlField", "affordance_shape"]


def affordance_shape(request: Any) -> Shape:
    """``?affordances=none`` asks for the plain, static representation, ``compact`` for
    entries without what the catalog says; no request, no affordances."""
    if request is None:
        return Shape.NONE
    params = getattr(request, "query_params", None) or getattr(request, "GET", {})
    return Shape.from_param(params.get("affordances"))


def _context_shape(context: dict[str, Any]) -> Shape:
    """The context may decide (True: the stored body of a run, whatever ?affordances
    says; False: none; a Shape); otherwise the request does."""
    asked = context.get("affordances")
    if isinstance(asked, Shape):
        return asked
    if isinstance(asked, bool):
        return Shape.FULL if asked else Shape.NONE
    return affordance_shape(context.get("request"))


class AffordancesMixin:
    """Add to a ModelSerializer of a registered model.

    Needs ``request`` in the serializer context (DRF views provide it). The per-request
    work — the caller's transitions, URL templates — is kept in the shared context, so
    a list of N objects costs no query per object.
    """

    context: dict[str, Any]

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)  # type: ignore[misc]
        shape = self.context.get("_affordances_shape")
        if shape is None:
            shape = self.context["_affordances_shape"] = _context_shape(self.context)
        request = self.context.get("request")
        user = getattr(request, "user", None)
        return with_affordances(data, instance, self.context, request, user, shape)


class ResourceUrlField(serializers.HyperlinkedIdentityField):
    """The object's own URL (its ``detail`` route, reversed in the app's namespace), for
    a registered model's serializer: ``url = ResourceUrlField()``. HAL's ``self`` link,
    MCP resource links and resource URIs read it."""

    def __init__(self, **kwargs: Any) -> None:
        # The route's name depends on the registration: known when an object is written
        # (not when the field is bound, which the catalog's own build does).
        kwargs.setdefault("view_name", "")
        super().__init__(**kwargs)

    def get_url(self, obj: Any, view_name: str, request: Any, format: Any) -> Any:
        if not view_name:
            basename = get_catalog().registered(type(obj)).basename
            view_name = routes.name(basename, "detail")
        return super().get_url(obj, view_name, request, format)
