"""django-affordances: stable verbs, dynamic affordances for django-fsm models.

The declarations are imported eagerly (models use them); the rest of the public API is
loaded on first use, since this package is imported before Django's app registry is
ready::

    from affordances import operation, condition, guard, creates   # in models.py
    from affordances import get_catalog, perform, Problem           # from code
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from affordances.declarations import condition, creates, guard, operation
from affordances.lazy import lazy_exports

if TYPE_CHECKING:
    from affordances.catalog import get_catalog
    from affordances.evaluation import Available, Unavailable, evaluate
    from affordances.execution import Outcome, perform, perform_create, perform_edit
    from affordances.problems import Problem, ProblemCode
    from affordances.reads import find, list_page, visible

_LAZY = {
    "Available": "evaluation",
    "Outcome": "execution",
    "Problem": "problems",
    "ProblemCode": "problems",
    "Unavailable": "evaluation",
    "evaluate": "evaluation",
    "find": "reads",
    "get_catalog": "catalog",
    "list_page": "reads",
    "perform": "execution",
    "perform_create": "execution",
    "perform_edit": "execution",
    "visible": "reads",
}

__all__ = [
    "Available",
    "Outcome",
    "Problem",
    "ProblemCode",
    "Unavailable",
    "condition",
    "creates",
    "evaluate",
    "find",
    "get_catalog",
    "guard",
    "list_page",
    "operation",
    "perform",
    "perform_create",
    "perform_edit",
    "visible",
]


__getattr__ = lazy_exports(__name__, _LAZY)
