"""BM25's parameters and result type, kept apart from the numpy postings
(``chunkls.search.inverted``) so that a reader of the persistent index
(``chunkls.index.ondisk``) scores with the very same formula without them."""

from __future__ import annotations

import math
from typing import Generic, NamedTuple, TypeVar

K1 = 1.5
"""Term-frequency saturation."""
B = 0.75
"""Length normalisation."""

T = TypeVar("T")


class Hit(NamedTuple, Generic[T]):
    """One search result."""

    score: float
    item: T


def term_weight(documents: int, df: int) -> float:
    """A term's weight: its inverse document frequency times ``K1 + 1``."""
    return math.log(1 + (documents - df + 0.5) / (df + 0.5)) * (K1 + 1)
