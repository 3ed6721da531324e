"""One visibility: what a caller may see is decided once, by the registration's ``QUERYSET``.

The registration's function — ``(user)`` or ``(user, request)`` — is the one place a
project narrows the objects a caller may see; every face reads it (REST's list, detail,
transitions, OPTIONS and HAL-FORMS, MCP's tools and resources, the admin, related
inputs, ``perform``). A view or admin that narrows on its own would hide an object from
some routes only — the detail 404 while the list shows it and a transition runs on it —
so an override of the reads a face takes from the core is refused at start-up
(``affordances.E032``), never honoured on one route only.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core import checks

__all__ = ["NARROWING_CHECK", "narrowing_overrides", "refused_narrowing"]

NARROWING_CHECK = "affordances.E032"

# Modules whose methods are the faces' own reads: the library's, and those of the
# frameworks its classes extend (DRF's GenericAPIView, Django's ModelAdmin).
_OWN = ("affordances.", "rest_framework.", "django.")


def narrowing_overrides(klass: type, names: Iterable[str]) -> list[str]:
    """The methods among ``names`` that ``klass`` takes from the project's code (a class
    of its own or a third party's) rather than from the library or its frameworks."""
    overridden = []
    for name in names:
        owner = next((base for base in klass.__mro__ if name in vars(base)), None)
        if owner is not None and not owner.__module__.startswith(_OWN):
            overridden.append(name)
    return overridden


def refused_narrowing(klass: type, names: Iterable[str], *, face: str) -> list[checks.Error]:
    """E032 for ``klass`` (a resource view or admin, ``face`` says which) when it
    overrides any of ``names``."""
    overridden = narrowing_overrides(klass, names)
    if not overridden:
        return []
    methods = ", ".join(f"{name}()" for name in overridden)
    return [
        checks.Error(
            f"{klass.__module__}.{klass.__qualname__} overrides {methods}: a {face} does "
            "not narrow what a caller may see — the other routes and faces (lists, "
            "transitions, MCP, the admin) read the registration's QUERYSET, so what it "
            "hides would stay listed and actionable everywhere else.",
            hint="Move the narrowing into the registration's QUERYSET function (it may take "
            "(user, request)), the one place every face reads, and remove the override.",
            obj=klass,
            id=NARROWING_CHECK,
        )
    ]
