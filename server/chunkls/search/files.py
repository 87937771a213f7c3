"""What a chunk's file adds to its score in ``hybrid``'s ranking: its other candidates lift
it (a question about how something works asks for the file that answers it together)."""

from __future__ import annotations


def file_lift(scores: list[float], score: float, top: int) -> float:
    """The summed scores of the ``top`` best of a file's other candidates (``scores``:
    the file's, best first, ``score`` among them)."""
    others = scores[: top + 1]
    if score in others:
        others = list(others)
        others.remove(score)
    return sum(others[:top])
