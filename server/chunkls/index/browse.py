"""Browsing the index a page at a time (only the stubs of the files it covers are read),
and chunk IDs proposed for what was typed (``Queries.propose_ids``)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from weakref import WeakKeyDictionary

from chunkls.search.modes import query_problem

if TYPE_CHECKING:
    from chunkls.index.folder import Folder
    from chunkls.index.store import ChunkStore
    from chunkls.storage.packed import Stub


class Place(NamedTuple):
    """Where a page starts: the part (0: files under the asked paths, 1: the rest), the
    folder's position, a root-relative path and the chunk's place in that file."""

    part: int
    position: int
    rel_path: str
    number: int


class Page(NamedTuple):
    """Chunks without their texts, in order, and where the next page starts (``None``: last)."""

    stubs: list[tuple[Folder, Stub]]
    next: Place | None


_SORTED: WeakKeyDictionary[object, tuple[object, list[str]]] = WeakKeyDictionary()
"""Sorted paths, kept until the store changes (else each page would sort thousands)."""


def _kept(owner: object, key: object, paths: Callable[[], Iterator[str] | list[str]]) -> list[str]:
    kept = _SORTED.get(owner)
    if kept is None or kept[0] != key:
        kept = _SORTED[owner] = (key, sorted(paths()))
    return kept[1]


def _state(store: ChunkStore) -> object:
    """What changes whenever a folder's paths may have changed."""
    return (store.version, store.folders_version)  # (reading in place or not: a version)


def sorted_paths(store: ChunkStore, folder: Folder) -> list[str]:
    """A folder's files with chunks, sorted (``Storage.paths``, kept)."""
    return _kept(folder, _state(store), folder.storage.paths)


def sources_starting(store: ChunkStore, prefix: str) -> list[str]:
    """The source paths that start with ``prefix``, sorted (kept sorted: a bisection)."""
    every = _kept(store, _state(store), lambda: iter(store.source_paths()))
    found = []
    for path in every[bisect_left(every, prefix) :]:
        if not path.startswith(prefix):
            break
        found.append(path)
    return found


def prefixes_under(folder: Folder, under: Sequence[Path]) -> list[str] | None:
    """The root-relative prefixes of ``folder``'s files under any of ``under``
    (``""``: all of them; ``None``: none)."""
    found: list[str] = []
    for path in under:
        for base in (folder.root, folder.root_resolved):
            try:
                rel = Path(path).relative_to(base).as_posix()
            except ValueError:
                try:
                    base.relative_to(path)
                except ValueError:
                    continue
                return [""]  # the folder lies inside this path: all of it
            if rel in ("", "."):
                return [""]
            found.append(rel + "/")
            break
    return found or None


def chunk_page(
    store: ChunkStore, start: Place | None, limit: int, under: Sequence[Path] = ()
) -> Page:

    stubs: list[tuple[Folder, Stub]] = []
    folders = sorted(store.folders, key=lambda folder: folder.position)
    parts = (0, 1) if under else (1,)
    begin = start or Place(parts[0], -1, "", 0)
    for part in parts:
        if part < begin.part:
            continue
        for folder in folders:
            if (part, folder.position) < (begin.part, begin.position):
                continue
            prefixes = prefixes_under(folder, under) if under else None
            paths = sorted_paths(store, folder)
            at = 0
            index = 0
            if (part, folder.position) == (begin.part, begin.position):
                at = bisect_left(paths, begin.rel_path)
                if at < len(paths) and paths[at] == begin.rel_path:
                    index = begin.number
            for rel_path in paths[at:]:
                first = prefixes is not None and any(map(rel_path.startswith, prefixes))
                if first != (part == 0) and under:
                    continue
                stored = folder.storage.stored(rel_path)
                file_stubs = stored.stubs if stored is not None else ()
                for number in range(index, len(file_stubs)):
                    if len(stubs) == limit:
                        return Page(stubs, Place(part, folder.position, rel_path, number))
                    stubs.append((folder, file_stubs[number]))
                index = 0
    return Page(stubs, None)


def _path_ids(store: ChunkStore, typed: str) -> Iterator[str]:
    """The IDs of the files whose path starts with ``typed`` (or, with a ``#``,
    of that file whose identity starts with what follows it), in corpus order."""
    path, hash_sign, _ = typed.partition("#")
    paths = [path] if hash_sign else sources_starting(store, path)
    for source_path in paths:
        for folder in sorted(store.folders, key=lambda folder: folder.position):
            for rel_path in folder.storage.sources(source_path):
                stored = folder.storage.stored(rel_path)
                for stub in stored.stubs if stored is not None else ():
                    if stub[0].startswith(typed) or (not hash_sign and stub[1] == source_path):
                        yield stub[0]


def propose_ids(store: ChunkStore, typed: str, limit: int) -> tuple[list[str], bool]:

    found: dict[str, None] = {}
    typed = typed.strip()
    if not typed:
        for chunk_id in store.chunk_ids():
            found[chunk_id] = None
            if len(found) > limit:
                break
        return list(found)[:limit], len(found) > limit
    for chunk_id in _path_ids(store, typed):
        found[chunk_id] = None
        if len(found) > limit:
            return list(found)[:limit], True
    mode = store.search_mode()
    if not found and "#" not in typed and query_problem(typed, mode) is None:
        from chunkls.index.named import symbol_search_ids  # (numpy: only when asked)

        hits = symbol_search_ids(store, typed, limit, mode)  # (workspace/symbol's order)
        return list(dict.fromkeys(hits)), len(hits) == limit  # (then there may be more)
    if not found:
        found = dict.fromkeys(store.suggest(typed, limit))
    return list(found)[:limit], len(found) > limit
