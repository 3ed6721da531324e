"""JSON the same way everywhere: DRF's encoder, byte-stable where it is hashed."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.utils.encoders import JSONEncoder

__all__ = ["canonical_json", "jsonable"]


def canonical_json(data: Any) -> str:
    """One byte-stable JSON text for hashing and golden files."""
    return json.dumps(data, cls=JSONEncoder, sort_keys=True, separators=(",", ":"))


def jsonable(data: Any) -> Any:
    """A plain JSON value, the same whether served now or replayed from a stored body."""
    return json.loads(json.dumps(data, cls=JSONEncoder))
