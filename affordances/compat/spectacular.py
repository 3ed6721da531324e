"""drf-spectacular's private API: what the OpenAPI face still relies on.

The core maps serializers itself (:mod:`affordances.fieldschema`); only the OpenAPI face
(:mod:`affordances.rest.openapi`) uses drf-spectacular. Its ``AutoSchema`` subclass still
overrides the hooks named in :data:`AUTOSCHEMA_HOOKS` (tests/test_private_api.py lists
them as pending): drf-spectacular offers no public point to add the affordance lists to
a representation's component, to state a ``CharField``'s text rules after its own
validators' pass (which would otherwise rewrite a blank-allowing field as a ``oneOf``),
or to give a list its registration's paginator and the catalog views their bodies and
``304``. The decimal rule goes through the public field extension point
(:mod:`affordances.rest.openapi_fields`). :func:`check_spectacular` (the test suite calls
it) fails on a release without them, in one test instead of quietly in the document.
"""

from __future__ import annotations

from importlib.metadata import version

__all__ = ["AUTOSCHEMA_HOOKS", "SPECTACULAR_TESTED", "check_spectacular"]

# The releases this module was written against (pyproject pins the same range).
SPECTACULAR_TESTED = ((0, 28), (1, 0))

# The private AutoSchema methods affordances.rest.openapi.AutoSchema overrides.
AUTOSCHEMA_HOOKS = (
    "_map_basic_serializer",
    "_insert_field_validators",
    "_get_paginator",
    "_get_response_for_code",
    "_get_response_bodies",
    "_get_response_headers_for_code",
)


def check_spectacular() -> None:
    """Raise ``ImportError`` if the installed drf-spectacular lacks what this module uses."""
    from drf_spectacular.openapi import AutoSchema

    installed = tuple(int(part) for part in version("drf-spectacular").split(".")[:2])
    low, high = SPECTACULAR_TESTED
    if not low <= installed < high:
        raise ImportError(f"drf-spectacular {installed} is outside the tested {low} to {high}.")
    for hook in AUTOSCHEMA_HOOKS:
        if not callable(getattr(AutoSchema, hook, None)):
            raise ImportError(f"drf-spectacular's AutoSchema no longer has {hook}.")
