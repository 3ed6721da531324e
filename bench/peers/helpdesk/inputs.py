# The tutorial's helpdesk/inputs.py (docs/tutorial.md).
from rest_framework import serializers


class ResolveInput(serializers.Serializer):
    resolution = serializers.ChoiceField(choices=["fixed", "wont_fix", "duplicate"])
    note = serializers.CharField(required=False, allow_blank=True, max_length=500)
