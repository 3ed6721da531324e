"""Deprecated: the app's base view moved to :mod:`affordances.rest.base`.

This path re-exports its names for one release (it goes away in 0.2), so that a
project's ``from affordances.rest.exceptions import …`` keeps working meanwhile;
nothing in the library imports it.
"""

from __future__ import annotations

import warnings

from affordances.rest.base import (
    ProblemResponsesMixin,
    caller,
    is_plain,
    not_found_response,
    not_found_view,
    problem_exception_handler,
    refusal_at,
    unauthenticated,
    unmatched_route_view,
)

__all__ = [
    "ProblemResponsesMixin",
    "caller",
    "is_plain",
    "not_found_response",
    "not_found_view",
    "problem_exception_handler",
    "refusal_at",
    "unauthenticated",
    "unmatched_route_view",
]

# Once, at the first import: Python caches the module, and the warning points at the
# import that names this path.
warnings.warn(
    "affordances.rest.exceptions is deprecated and goes away in django-affordances 0.2; "
    "import from affordances.rest.base (or affordances.rest) instead.",
    DeprecationWarning,
    stacklevel=2,
)
