"""What the OpenAPI face and the views both say of problem documents, below both.

:class:`ProblemSerializer` describes a problem body (docs/reference/problems.md);
:data:`PROBLEM_DOCUMENTS_ATTRIBUTE` marks a view whose unmatched sub-URLs answer problem
documents and whose inputs go through the library's argument validation.
"""

from __future__ import annotations

from rest_framework import serializers

__all__ = ["BODY_COMPONENT_ATTRIBUTE", "PROBLEM_DOCUMENTS_ATTRIBUTE", "ProblemSerializer"]

# Marks a view whose unmatched sub-URLs answer problem documents (see not_found_view).
PROBLEM_DOCUMENTS_ATTRIBUTE = "affordances_problem_documents"
# The OpenAPI component of a catalog view's 2xx body (its body is no serializer's).
BODY_COMPONENT_ATTRIBUTE = "affordances_body_component"


class ProblemSerializer(serializers.Serializer):  # type: ignore[type-arg]
    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()
    reason = serializers.CharField(required=False)
    # DRF pops declared fields off the class, so this does not shadow Serializer.errors;
    # the stubs cannot know that.
    errors = serializers.DictField(required=False)  # type: ignore[assignment]
    current = serializers.DictField(required=False)
