"""drf-spectacular's private API, in one place: an incompatible release fails here."""

from __future__ import annotations

from rest_framework import serializers

from affordances.compat import check_spectacular, map_serializer


class _Sample(serializers.Serializer):
    reason = serializers.ChoiceField(choices=["a", "b"])
    note = serializers.CharField(required=False, max_length=10)


def test_the_installed_drf_spectacular_has_what_the_catalog_uses():
    check_spectacular()  # raises ImportError naming what is missing


def test_spectacular_still_maps_a_serializer_as_the_catalog_expects():
    schema, components = map_serializer(_Sample(), "request")

    assert schema["type"] == "object"
    assert schema["required"] == ["reason"]
    assert schema["properties"]["note"] == {"type": "string", "maxLength": 10}
    assert schema["properties"]["reason"]["enum"] == ["a", "b"]
    assert components == {}  # nested serializers only; the catalog inlines any
