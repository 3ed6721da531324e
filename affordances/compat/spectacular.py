"""drf-spectacular's private API, used in exactly one place.

The catalog turns input serializers into JSON Schema with drf-spectacular's own field
mapping, which it exposes only through ``AutoSchema._map_basic_serializer`` and the
component registry's ``_components``. Every use of them is here, checked by
:func:`check_spectacular` (the test suite calls it), so an incompatible release fails
loudly in one test instead of quietly in the catalog.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from rest_framework import serializers

__all__ = ["SPECTACULAR_TESTED", "check_spectacular", "map_serializer"]

# The releases this module was written against (pyproject pins the same range).
SPECTACULAR_TESTED = ((0, 28), (1, 0))


def _auto_schema(direction: str) -> Any:
    from drf_spectacular.openapi import AutoSchema
    from drf_spectacular.plumbing import ComponentRegistry
    from rest_framework.views import APIView

    auto = AutoSchema()
    auto.registry = ComponentRegistry()
    auto.method = "POST" if direction == "request" else "GET"
    auto.path = "/"
    auto.path_regex = "/"
    # spectacular reads a few view attributes while mapping; a bare view is enough.
    view = APIView()
    view.request = None  # type: ignore[assignment]  # no request: mapping needs none
    view.args, view.kwargs, view.format_kwarg = (), {}, None
    auto.view = view
    return auto


def map_serializer(
    serializer: serializers.Serializer[Any], direction: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(schema, components): spectacular's OpenAPI mapping of one serializer."""
    auto = _auto_schema(direction)
    schema = auto._map_basic_serializer(serializer, direction)
    components = {
        component.name: component.schema for component in auto.registry._components.values()
    }
    return schema, components


def check_spectacular() -> None:
    """Raise ``ImportError`` if the installed drf-spectacular lacks what this module uses."""
    from drf_spectacular.openapi import AutoSchema
    from drf_spectacular.plumbing import ComponentRegistry

    installed = tuple(int(part) for part in version("drf-spectacular").split(".")[:2])
    low, high = SPECTACULAR_TESTED
    if not low <= installed < high:
        raise ImportError(f"drf-spectacular {installed} is outside the tested {low} to {high}.")
    if not callable(getattr(AutoSchema, "_map_basic_serializer", None)):
        raise ImportError("drf-spectacular no longer has AutoSchema._map_basic_serializer.")
    if not isinstance(getattr(ComponentRegistry(), "_components", None), dict):
        raise ImportError("drf-spectacular's ComponentRegistry no longer keeps _components.")
