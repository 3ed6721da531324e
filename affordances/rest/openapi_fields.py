"""The OpenAPI face's field mapping, through drf-spectacular's public extension point.

A decimal input of the app's views takes what the catalog states, the decimal rule
(:func:`affordances.fieldschema.decimal_schema`: a JSON number or a plain decimal
string); everywhere else a decimal is what drf-spectacular states by default (DRF's
string, or a number within the field's digits), so a project's own views are
described as before. Imported by :mod:`affordances.rest.openapi`, which registers it.
"""

from __future__ import annotations

from typing import Any

from django.utils.formats import get_format
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers
from rest_framework.settings import api_settings

from affordances.fieldschema import decimal_schema, field_annotations
from affordances.rest.openapi_bodies import openapi_dialect
from affordances.rest.problem_documents import PROBLEM_DOCUMENTS_ATTRIBUTE

__all__ = ["DecimalFieldExtension", "runs_operations"]


def runs_operations(view: Any) -> bool:
    """An app view: its inputs go through ``validate_arguments`` (plain decimals only);
    DRF alone also takes ``"1e2"`` or ``" 12 "``, which the default mapping allows."""
    return bool(getattr(view, PROBLEM_DOCUMENTS_ATTRIBUTE, False))


class DecimalFieldExtension(OpenApiSerializerFieldExtension):  # type: ignore[no-untyped-call]
    """Every ``DecimalField`` (a subclass too); a project's own extension for its decimal
    fields, at the default priority, wins."""

    target_class = serializers.DecimalField
    match_subclasses = True
    priority = -1

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> Any:
        field: serializers.DecimalField = self.target
        if direction == "request" and _as_string(field) and runs_operations(auto_schema.view):
            return openapi_dialect(decimal_schema(field, field_annotations(field)))
        return _default(field)


def _as_string(field: serializers.DecimalField) -> bool:
    return bool(getattr(field, "coerce_to_string", api_settings.COERCE_DECIMAL_TO_STRING))


def _default(field: serializers.DecimalField) -> dict[str, Any]:
    """drf-spectacular's own mapping of a decimal (OpenAPI 3.0): a string of the field's
    digits in its separator, or a number within them."""
    whole = field.max_whole_digits
    if _as_string(field):
        schema: dict[str, Any] = {"type": "string", "format": "decimal"}
        if whole is not None:
            pattern = r"^-?0?" if whole == 0 else rf"^-?\d{{0,{whole}}}"
            separator = get_format("DECIMAL_SEPARATOR") if field.localize else "."
            schema["pattern"] = pattern + rf"(?:\{separator}\d{{0,{field.decimal_places}}})?$"
        return schema
    number: dict[str, Any] = {"type": "number", "format": "double"}
    if whole is not None:
        number.update(
            {
                "maximum": 10**whole,
                "minimum": -(10**whole),
                "exclusiveMaximum": True,
                "exclusiveMinimum": True,
            }
        )
    if field.max_value is not None:
        number["maximum"] = field.max_value
        number.pop("exclusiveMaximum", None)
    if field.min_value is not None:
        number["minimum"] = field.min_value
        number.pop("exclusiveMinimum", None)
    return number
