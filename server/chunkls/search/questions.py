"""What a question asks for in ``hybrid``'s ranking: the big definitions that do the work
more than a short one whose words match, and an exception class only when it names errors
(``docs/search.md``)."""

from __future__ import annotations

import functools
import math
import re

QUESTION_WORDS = frozenset({"how", "what", "where", "which", "why", "when", "who", "does"})
"""A query whose first word is one of these is a question."""
QUESTION_LENGTH = 1.2
"""A question's candidate's score times ``1 + QUESTION_LENGTH * log1p(length / average)``."""
ERROR_PRIOR = 0.5
"""The score factor of an exception class (a name ending in ``Error``,
``Exception`` or ``Warning``) for a question or a topic, unless it names errors."""
ERROR_WORDS = frozenset(
    {"error", "errors", "exception", "exceptions", "warning", "warnings", "raise", "raises"}
)
_ERROR_NAME = re.compile(r"(?:Error|Exception|Warning)$")


def is_question(words: list[str]) -> bool:
    """Whether a query's words (lowercase, in order) make a question."""
    return bool(words) and words[0] in QUESTION_WORDS


class Asked:
    """The factors one query gives its candidates' BM25 scores."""

    def __init__(self, question: bool, sentence: bool, words: list[str]) -> None:
        self.length = QUESTION_LENGTH if question else 0.0
        self.errors = 1.0 if sentence or not ERROR_WORDS.isdisjoint(words) else ERROR_PRIOR

    def size(self, ratio: float) -> float:
        """The factor of a chunk ``ratio`` times as long as the average."""
        return 1 + self.length * math.log1p(ratio) if self.length else 1.0

    def prior(self, symbol: str | None) -> float:
        """The factor of a chunk named ``symbol`` (an exception class's, or 1)."""
        return self.errors if symbol and _is_error(symbol) else 1.0


@functools.lru_cache(maxsize=8192)
def _is_error(symbol: str) -> bool:
    return _ERROR_NAME.search(symbol) is not None
