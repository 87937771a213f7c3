"""ID suggestions: the existing chunk IDs closest to one that does not resolve (an unknown
path's nearest source paths first: trigrams pick a pool, ``difflib`` ranks it)."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from chunkls.index.folder import Folder

if TYPE_CHECKING:
    from chunkls.index.store import ChunkStore

SUGGEST_POOL = 40
"""Paths compared in full (difflib) when suggesting for an unknown path."""
SUGGEST_CHARS = 256
"""Characters of an unknown ID compared (a 100 kB "ID" is compared by its start)."""


class Suggestions:
    """Suggestions over a store's IDs, remembered until the store changes."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self._suggested: tuple[int, dict[tuple[str, int], list[str]]] = (0, {})
        self._paths = PathGrams()
        """Every source path by trigram (kept up to date through ``source_watcher``)."""
        store.source_watcher = self._paths

    def suggest(self, chunk_id: str, limit: int = 3) -> list[str]:
        """``Queries.suggest`` (remembered until the index changes)."""
        key = (chunk_id[: SUGGEST_CHARS * 2], limit)
        if self._suggested[0] != self.store.version:
            self._suggested = (self.store.version, {})
        known = self._suggested[1].get(key)
        if known is None:
            if len(self._suggested[1]) >= 1024:
                self._suggested[1].clear()
            known = self._suggested[1][key] = self._suggest(chunk_id, limit)
        return list(known)

    def _suggest(self, chunk_id: str, limit: int) -> list[str]:
        """Those of its path when it has chunks, else those of the nearest source paths."""
        path, _, identity = chunk_id.partition("#")
        identity = identity[:SUGGEST_CHARS]
        own = self._ids_of(path)
        if own is not None:
            candidates = sorted(set(own))
            return _closest(identity, candidates, limit, key=lambda cid: cid.partition("#")[2])
        near = difflib.get_close_matches(path, self._near_paths(path), n=3, cutoff=0.6)
        candidates = sorted({chunk_id for each in near for chunk_id in self._ids_of(each) or ()})
        return _closest(f"{path}#{identity}"[:SUGGEST_CHARS], candidates, limit)

    def _ids_of(self, path: str) -> list[str] | None:
        """The IDs of a source path (``None``: no such path)."""
        found = [
            stored.chunk_ids()
            for folder in self.store.folders
            for rel_path in folder.storage.sources(path)
            if (stored := folder.storage.stored(rel_path)) is not None
        ]
        return [chunk_id for ids in found for chunk_id in ids] if found else None

    def _near_paths(self, path: str) -> list[str]:
        """The source paths sharing the most trigrams with ``path`` (a few)."""
        if not self._paths.built:
            self._paths.build(self.store.source_paths())
        return self._paths.near(path[:SUGGEST_CHARS])


class PathGrams:
    """Source paths by trigram; a dropped one leaves a hole (rebuilt when holes are most)."""

    def __init__(self) -> None:
        self.built = False
        self.paths: list[str | None] = []
        self.numbers: dict[str, int] = {}
        self.grams: dict[str, list[int]] = {}
        self.holes = 0

    def build(self, paths: Iterable[str]) -> None:
        """Index these paths, from scratch."""
        self.paths, self.numbers, self.grams, self.holes = [], {}, {}, 0
        self.built = True
        for path in sorted(paths):
            self.add(path)

    def add(self, path: str) -> None:
        """A source path appeared (in some folder)."""
        if not self.built or path in self.numbers:
            return
        number = len(self.paths)
        self.paths.append(path)
        self.numbers[path] = number
        for gram in _trigrams(path):
            self.grams.setdefault(gram, []).append(number)

    def discard(self, path: str, folders: Iterable[Folder]) -> None:
        """A source path left a folder: dropped unless another folder has it."""
        if not self.built or any(folder.storage.sources(path) for folder in folders):
            return
        number = self.numbers.pop(path, None)
        if number is None:
            return
        self.paths[number] = None
        self.holes += 1
        if self.holes > max(1000, len(self.numbers)):
            self.build(self.numbers)

    def near(self, path: str) -> list[str]:
        """The paths sharing the most trigrams with ``path``, in index order."""
        live = len(self.numbers)
        if live <= SUGGEST_POOL:
            return sorted(self.numbers)
        shared: dict[int, int] = {}
        common = max(SUGGEST_POOL, live // 8)
        for gram in _trigrams(path):
            numbers = self.grams.get(gram, ())
            if len(numbers) > common:
                continue  # ".py", "/__": says nothing
            for number in numbers:
                shared[number] = shared.get(number, 0) + 1
        ranked = sorted(shared, key=lambda number: (-shared[number], number))
        best = [number for number in ranked if self.paths[number] is not None][:SUGGEST_POOL]
        return [self.paths[number] for number in sorted(best)]  # type: ignore[misc]


def _trigrams(text: str) -> set[str]:
    padded = f"  {text.lower()} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _closest(
    target: str, candidates: list[str], limit: int, key: Callable[[str], str] = str
) -> list[str]:
    scored = sorted(
        (-difflib.SequenceMatcher(None, target, key(candidate), autojunk=False).ratio(), candidate)
        for candidate in candidates
    )
    return [candidate for _, candidate in scored[:limit]]
