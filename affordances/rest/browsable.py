"""DRF's browsable API, plus a form per offered affordance on a single resource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.renderers import BrowsableAPIRenderer

from affordances.arguments import NoArguments
from affordances.catalog import get_catalog
from affordances.inputs import input_fields

__all__ = ["AffordancesBrowsableAPIRenderer"]


class AffordancesBrowsableAPIRenderer(BrowsableAPIRenderer):
    """Shows the affordances of a resource as forms built from their input serializers.

    The forms post to each affordance's target with the version they were rendered
    for; the execution path re-checks everything, as for any other client.
    """

    template = "affordances/api.html"

    def get_context(
        self, data: Any, accepted_media_type: str | None, renderer_context: Mapping[str, Any]
    ) -> dict[str, Any]:
        context = super().get_context(data, accepted_media_type, renderer_context)
        context["affordance_forms"] = self._affordance_forms(data)
        return context

    def _affordance_forms(self, data: Any) -> list[dict[str, Any]]:
        if not isinstance(data, dict) or not isinstance(data.get("affordances"), list):
            return []
        catalog = get_catalog()
        forms = []
        for affordance in data["affordances"]:
            operation = catalog.lookup(affordance.get("name", ""))
            if operation is None or affordance.get("target") is None:
                continue
            serializer = (operation.input_serializer or NoArguments)()
            _narrow_choices(serializer, affordance.get("constraints") or {})
            forms.append(
                {
                    "name": operation.name,
                    "title": operation.title,
                    "target": affordance["target"],
                    "version": affordance.get("validForVersion"),
                    "form": self.render_form_for_serializer(serializer),
                }
            )
        return forms


def _narrow_choices(serializer: serializers.Serializer, constraints: dict[str, Any]) -> None:
    """Offer only the choices the constraints allow for this object and caller."""
    for item in input_fields(type(serializer), constraints):
        field = serializer.fields.get(item.name)
        if item.kind == "choice" and isinstance(field, serializers.ChoiceField):
            field.choices = list(item.choices)
