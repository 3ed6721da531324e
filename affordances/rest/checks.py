"""System checks of the REST face: what would silently break its links and documents."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks
from rest_framework.settings import api_settings

from affordances import routes
from affordances.catalog import get_catalog
from affordances.rest.renderers import HalFormsRenderer, HalRenderer

__all__ = ["check_rest_face"]


@checks.register(checks.Tags.urls)
def check_rest_face(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    try:
        catalog = get_catalog()
    except Exception:  # the core's checks report a catalog that cannot be built
        return []
    messages = [*_check_routes(catalog), *_check_renderers(), *_check_schema_class()]
    return messages


def _check_routes(catalog: Any) -> list[checks.CheckMessage]:
    """W004: a registered model whose routes do not reverse (targets would be null);
    W008: models registered, but the catalog's endpoints are not in the URLconf."""
    messages: list[checks.CheckMessage] = []
    if catalog.resources and routes.path_or_none(routes.ENTRY_POINT) is None:
        messages.append(
            checks.Warning(
                f"No URL named {routes.ENTRY_POINT}: the API's entry point and the catalog "
                "(GET /operations/) are not served, and interface C has nowhere to start.",
                hint="Include a ResourceRouter's URLs: path('api/', include(router.urls)) "
                f"(they carry the catalog's endpoints, in the {routes.NAMESPACE!r} "
                "namespace; affordances.rest.urls is not included on its own).",
                id="affordances.W008",
            )
        )
    for resource in catalog.resources:
        wanted = [("list", {}), ("detail", {"pk": 1})] + [
            (op.method_name, {"pk": 1}) for op in catalog.transitions_for(resource.model)
        ]
        missing = [
            routes.name(resource.basename, action)
            for action, kwargs in wanted
            if routes.path_or_none(routes.name(resource.basename, action), **kwargs) is None
        ]
        if missing:
            messages.append(
                checks.Warning(
                    f"{resource.options.label}: no URL named {', '.join(missing)}. "
                    "Affordance targets, links and MCP resource URIs would be null.",
                    hint="Register its viewset with affordances.rest.ResourceRouter (one "
                    "per project) and include(router.urls) in the URLconf: its routes are "
                    f'named in the "{routes.NAMESPACE}" namespace.',
                    id="affordances.W004",
                )
            )
    return messages


def _check_renderers() -> list[checks.CheckMessage]:
    """W005, W007: HAL-FORMS and HAL are part of the REST face; without their renderers a
    client asking for them gets 406."""
    renderers: list[Any] = list(api_settings.DEFAULT_RENDERER_CLASSES)  # classes, not paths
    messages: list[checks.CheckMessage] = []
    for renderer, consequence, check_id in (
        (HalFormsRenderer, " (and interface C reads nothing)", "affordances.W005"),
        (HalRenderer, "", "affordances.W007"),
    ):
        if any(issubclass(cls, renderer) for cls in renderers):
            continue
        messages.append(
            checks.Warning(
                f"REST_FRAMEWORK['DEFAULT_RENDERER_CLASSES'] has no {renderer.__name__}: "
                f"Accept: {renderer.media_type} answers 406{consequence}.",
                hint=f'Add "affordances.rest.renderers.{renderer.__name__}" after the JSON '
                "renderer.",
                id=check_id,
            )
        )
    return messages


def _check_schema_class() -> list[checks.CheckMessage]:
    """W006: drf-spectacular installed but not DRF's schema class."""
    if not apps.is_installed("drf_spectacular"):
        return []
    from drf_spectacular.openapi import AutoSchema

    schema_class: Any = api_settings.DEFAULT_SCHEMA_CLASS  # imported: a class, not a path
    if isinstance(schema_class, type) and issubclass(schema_class, AutoSchema):
        return []
    return [
        checks.Warning(
            "drf_spectacular is installed but REST_FRAMEWORK['DEFAULT_SCHEMA_CLASS'] is not "
            "its AutoSchema: the OpenAPI document cannot be generated.",
            hint='Set "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema".',
            id="affordances.W006",
        )
    ]
