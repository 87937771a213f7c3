"""What a stale chunk ID became (moved, renamed, changed, deleted): its last text (git, else
the cache's history) matched against today's chunks (``TextIndex``).

A replacement is ``certain`` (what ``check --fix`` rewrites) when it is one chunk: moved or
renamed with no second candidate, or changed at ``FIX_SIMILARITY`` and ``FIX_LEAD``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from chunkls.index.history import Sighting, safe_path

if TYPE_CHECKING:
    from chunkls.index.store import ChunkStore

CHANGED_SIMILARITY = 0.6
"""Least ``similarity`` (``difflib``'s ratio of the tokens) for a *changed* replacement."""
CHANGED_LEAD = 0.05
"""How far a changed replacement must be ahead of the runner-up to be offered first."""
FIX_SIMILARITY = 0.8
"""Least similarity of a changed replacement ``check --fix`` rewrites to."""
FIX_LEAD = 0.1
"""How far ahead of the runner-up a changed replacement ``check --fix`` rewrites to is."""
CHANGED_TOKENS = 24
"""Fewest tokens an old text has for a *changed* replacement (two short bodies are
alike by their punctuation alone)."""
SHORTLIST = 8
"""Chunks compared in full (``difflib``) for a changed replacement, picked by shared words."""
MOVED_CHARS = 40
"""A moved chunk's text shorter than this is certain only under its old identity
(a one-line body is found in many places)."""
COMPARED_CHARS = 4_000
"""Characters of each text whose words pick the shortlist."""
COMPARED_TOKENS = 1_500
"""Tokens of each text compared (``difflib`` is quadratic in the worst case)."""

KINDS = ("moved", "renamed", "changed", "deleted")

EVIDENCE_SCHEMA: dict[str, object] = {
    "type": ["object", "null"],
    "description": "What a stale ID's history says its chunk became (null: no history).",
    "properties": {
        "chunk_id": {"type": ["string", "null"], "description": "The new ID (null: deleted)."},
        "kind": {"type": "string", "enum": list(KINDS)},
        "commit": {
            "type": ["string", "null"],
            "description": "The newest commit that had the old ID (null: the index's history).",
        },
        "date": {"type": ["string", "null"], "description": "That commit's date."},
        "similarity": {"type": "number", "description": "Of the old and the new text, 0 to 1."},
        "certain": {"type": "boolean", "description": "Whether `chunkls check --fix` rewrites it."},
    },
    "required": ["chunk_id", "kind", "commit", "date", "similarity", "certain"],
    "additionalProperties": False,
}
"""``Replacement.evidence()`` as JSON Schema (the MCP tools' output schemas)."""

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_TOKEN = re.compile(r"\w+|[^\w\s]")


class Replacement(NamedTuple):
    """A stale ID's fate, with its evidence."""

    chunk_id: str | None
    """The new ID (``None``: deleted)."""
    kind: str
    """``moved``, ``renamed``, ``changed`` or ``deleted``."""
    commit: str | None
    """The newest commit where the old ID was seen (``None``: from the cache's history)."""
    date: str | None
    similarity: float
    """Of the old text and the new chunk's (0.0 for a deleted chunk)."""
    certain: bool
    """Clear enough to rewrite (``check --fix``)."""
    old_text: str
    """The text the old ID last named."""
    bounded: bool = False
    """Whether the history walk stopped at its bound."""
    old_id: str = ""
    """The stale ID as looked up (a document-relative one made root-relative)."""

    def evidence(self) -> dict[str, object]:
        """As JSON (``chunkls check --format json``, the MCP tools)."""
        return {
            "chunk_id": self.chunk_id,
            "kind": self.kind,
            "commit": self.commit,
            "date": self.date,
            "similarity": round(self.similarity, 3),
            "certain": self.certain,
        }

    def said(self) -> str:
        """In words: ``moved to B in 1a2b3c4, 2026-03-02``; a changed one says how
        alike (``changed to B, 91% alike, in …``)."""
        alike = f", {self.similarity:.0%} alike," if self.kind == "changed" else ""
        if self.commit is None:  # (outside git: the cache's history)
            if self.chunk_id is None:
                return "deleted; last seen by the index"
            return f"{self.kind} to {self.chunk_id}{alike.rstrip(',')}, as the index saw it"
        where = f"{self.commit[:7]}, {self.date}"
        if self.chunk_id is None:
            return f"deleted; last seen in {where}"
        return f"{self.kind} to {self.chunk_id}{alike} in {where}"


def _kind_of(identity: str) -> str:
    return identity.partition("-")[0]


def _name_of(identity: str) -> str:
    kind, _, name = identity.partition("-")
    return name if kind in ("function", "class") else ""


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_IDENTIFIER = re.compile(r"\w+")


def _unnamed(text: str, name: str) -> str:
    """A text with its own name as a word replaced by a placeholder."""
    if name not in text:
        return text
    return _IDENTIFIER.sub(lambda word: "\0" if word.group() == name else word.group(), text)


class TextIndex:
    """Today's chunk texts: by digest, by digest without their own name, by word."""

    def __init__(self, chunks: Iterable[tuple[str, str]]) -> None:
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.by_text: dict[bytes, list[int]] = {}
        self.by_unnamed: dict[bytes, list[int]] = {}
        self.by_word: dict[str, list[int]] = {}
        seen: set[str] = set()
        for chunk_id, text in chunks:
            if chunk_id in seen:
                continue
            seen.add(chunk_id)
            number = len(self.ids)
            self.ids.append(chunk_id)
            self.texts.append(text)
            self.by_text.setdefault(_digest(text), []).append(number)
            name = _name_of(chunk_id.partition("#")[2])
            if name:
                self.by_unnamed.setdefault(_digest(_unnamed(text, name)), []).append(number)
            for word in set(_WORD.findall(text[:COMPARED_CHARS])):
                self.by_word.setdefault(word, []).append(number)

    def match(self, sighting: Sighting) -> Replacement:
        """What the sighted chunk became."""
        old_id, text = sighting.chunk_id, sighting.text
        identity = old_id.partition("#")[2]
        kind = _kind_of(identity)

        def answer(new: int | None, what: str, similarity: float, certain: bool) -> Replacement:
            return Replacement(
                self.ids[new] if new is not None else None,
                what,
                sighting.commit,
                sighting.date,
                similarity,
                certain,
                text,
                sighting.bounded,
                old_id,
            )

        same = [n for n in self.by_text.get(_digest(text), ()) if self.ids[n] != old_id]
        if same:
            best = self._nearest(old_id, same)
            sure = len(text.strip()) >= MOVED_CHARS or self.ids[best[0]].endswith(f"#{identity}")
            return answer(best[0], "moved", 1.0, len(best) == 1 and sure)
        name = _name_of(identity)
        if name:
            renamed = [
                n
                for n in self.by_unnamed.get(_digest(_unnamed(text, name)), ())
                if self.ids[n] != old_id and _kind_of(self.ids[n].partition("#")[2]) == kind
            ]
            if renamed:
                best = self._nearest(old_id, renamed)
                sure = len(text.strip()) >= MOVED_CHARS
                return answer(best[0], "renamed", 1.0, len(best) == 1 and sure)
        scored = self._similar(old_id, text, kind) if len(tokens(text)) >= CHANGED_TOKENS else []
        if scored:
            top, number = scored[0]
            runner = scored[1][0] if len(scored) > 1 else 0.0
            if top >= CHANGED_SIMILARITY and top - runner >= CHANGED_LEAD:
                certain = top >= FIX_SIMILARITY and top - runner >= FIX_LEAD
                return answer(number, "changed", top, certain)
        return answer(None, "deleted", 0.0, False)

    def identity(self, number: int) -> str:
        return self.ids[number].partition("#")[2]

    def _nearest(self, old_id: str, numbers: list[int]) -> list[int]:
        """The first group of same identity, same path, the rest (more than one: ambiguous)."""
        path, _, identity = old_id.partition("#")

        def rank(number: int) -> int:
            new_path, _, new_identity = self.ids[number].partition("#")
            return (0 if new_identity == identity else 2) + (0 if new_path == path else 1)

        best = min(map(rank, numbers))
        return sorted((n for n in numbers if rank(n) == best), key=lambda n: self.ids[n])

    def _similar(self, old_id: str, text: str, kind: str) -> list[tuple[float, int]]:
        """The chunks of the same kind most alike, best first (a shortlist by words)."""
        words = set(_WORD.findall(text[:COMPARED_CHARS]))
        if not words:
            return []
        common = max(50, len(self.ids) // 10)
        shared: dict[int, int] = {}
        for word in words:
            numbers = self.by_word.get(word, ())
            if len(numbers) > common:
                continue  # "self", "return": says nothing
            for number in numbers:
                shared[number] = shared.get(number, 0) + 1
        same_kind = [
            n for n in shared if self.ids[n] != old_id and _kind_of(self.identity(n)) == kind
        ]
        candidates = sorted(same_kind, key=lambda n: (-shared[n], n))[:SHORTLIST]
        old = tokens(text)
        # difflib's quick_ratio bounds its ratio from above: the full ratio is taken
        # only of the candidates that could still be first or second
        bounded = []
        for number in candidates:
            matcher = difflib.SequenceMatcher(None, old, tokens(self.texts[number]))
            bounded.append((matcher.quick_ratio(), number, matcher))
        bounded.sort(key=lambda item: (-item[0], self.ids[item[1]]))
        scored: list[tuple[float, int]] = []
        for bound, number, matcher in bounded:
            second = sorted(pair[0] for pair in scored)[-2] if len(scored) >= 2 else -1.0
            if bound < second:
                break  # (neither it nor the rest can be first or the runner-up)
            scored.append((round(matcher.ratio(), 6), number))
        scored.sort(key=lambda pair: (-pair[0], self.ids[pair[1]]))
        return scored


def tokens(text: str) -> list[str]:
    """A text's words and punctuation, in order (the first ``COMPARED_TOKENS``)."""
    return _TOKEN.findall(text, 0, COMPARED_CHARS * 4)[:COMPARED_TOKENS]


def _ratio(a: list[str], b: list[str]) -> float:
    return round(difflib.SequenceMatcher(None, a, b).ratio(), 6)


def similarity(a: str, b: str) -> float:
    """How alike two chunk texts are, 0 to 1: ``difflib``'s ratio of their tokens."""
    return _ratio(tokens(a), tokens(b))


class ChunkHistory:
    """The text of chunks that left the index, by ID (bounded): what a renamed one said."""

    def __init__(self, limit: int = 10_000, chars: int = 2_000) -> None:
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._limit = limit
        self._chars = chars

    def forget_ids(self, gone: dict[str, str]) -> None:
        """Remember the start of the texts of chunk IDs that just disappeared."""
        for chunk_id, text in gone.items():
            self._texts[chunk_id] = text[: self._chars]
            self._texts.move_to_end(chunk_id)
        while len(self._texts) > self._limit:
            self._texts.popitem(last=False)

    def text_of(self, chunk_id: str) -> str | None:
        """The last text seen for a chunk ID that no longer exists."""
        return self._texts.get(chunk_id)


def last_sighting(store: ChunkStore, chunk_id: str) -> Sighting | None:
    """The text a chunk ID last named: from the first folder's git history that
    has it, else from the history of chunks that left the index (in memory, then
    each folder's cache). A folder whose history is not open yet is marked wanted
    (the answer is incomplete: the write step opens it)."""
    if not safe_path(chunk_id.partition("#")[0]):
        return None  # never looked up: it would leave the root
    for folder in store.folders:
        history = store.git_histories.get(folder)
        if history is None or not history.ready:
            store.histories_wanted.add(folder)
            continue
        found = history.sighting(chunk_id)
        if found is not None:
            return found
    text = store.history.text_of(chunk_id) if "history" in vars(store) else None
    for folder in store.folders if text is None else ():
        if folder.cache is not None and (text := folder.cache.gone_text(chunk_id)):
            break
    return Sighting(chunk_id, text, None, None) if text is not None else None
