"""A dict and a list that refuse to change: what one request shares between rows.

The rows of a page share objects (a state's refusals, a constraint spelled alike, a
row's ``arguments``): fewer objects per row is less for the garbage collector to walk.
Shared, they must never change — a change to one row's would be every row's. These
types say so where it would happen: any change raises ``TypeError``. They are a
``dict`` and a ``list`` to every reader and encoder (orjson, ``json``, DRF), and a copy
(``dict(x)``, ``x.copy()``, ``[*x]``, ``copy.deepcopy``, pickle) is a plain one, free
to change.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, NoReturn, SupportsIndex

__all__ = ["FrozenDict", "FrozenList"]


def _refuse(kind: str) -> NoReturn:
    raise TypeError(f"This {kind} is shared between rows and read-only: change a copy of it.")


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses every change."""

    __slots__ = ()

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        _refuse("dict")

    def __delitem__(self, key: str) -> NoReturn:
        _refuse("dict")

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        _refuse("dict")

    def clear(self) -> NoReturn:
        _refuse("dict")

    def pop(self, key: str, *default: Any) -> NoReturn:
        _refuse("dict")

    def popitem(self) -> NoReturn:
        _refuse("dict")

    def setdefault(self, key: str, default: Any = None) -> NoReturn:
        _refuse("dict")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("dict")

    def copy(self) -> dict[str, Any]:
        return dict(self)

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list[Any]):
    """A ``list`` that refuses every change."""

    __slots__ = ()

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        _refuse("list")

    def __delitem__(self, index: Any) -> NoReturn:
        _refuse("list")

    def __iadd__(self, other: Iterable[Any]) -> NoReturn:  # type: ignore[misc]
        _refuse("list")

    def __imul__(self, count: SupportsIndex) -> NoReturn:
        _refuse("list")

    def append(self, value: Any) -> NoReturn:
        _refuse("list")

    def extend(self, values: Iterable[Any]) -> NoReturn:
        _refuse("list")

    def insert(self, index: SupportsIndex, value: Any) -> NoReturn:
        _refuse("list")

    def remove(self, value: Any) -> NoReturn:
        _refuse("list")

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        _refuse("list")

    def clear(self) -> NoReturn:
        _refuse("list")

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse("list")

    def reverse(self) -> NoReturn:
        _refuse("list")

    def copy(self) -> list[Any]:
        return list(self)

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return copy.deepcopy(list(self), memo)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))
