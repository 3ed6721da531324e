"""django-fsm-2's private API, used in exactly one place."""

from __future__ import annotations

from typing import Any

from django_fsm import FSMMeta

__all__ = ["transition_meta"]


def transition_meta(method: Any) -> FSMMeta | None:
    """The ``FSMMeta`` django-fsm's ``@transition`` keeps on the method it wraps (its
    ``_django_fsm`` attribute), or None when ``method`` is no transition.

    It holds every ``Transition`` of the method (sources, target, conditions,
    permission, ``custom``); django-fsm's own ``get_available_*_transitions`` read it
    the same way, and no public function returns it for one method.
    """
    meta = getattr(method, "_django_fsm", None)
    return meta if isinstance(meta, FSMMeta) else None
