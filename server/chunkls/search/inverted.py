"""Okapi BM25 over chunks, with one-file updates: scores are bit-for-bit those
of a fresh build (the same floating-point operations, in the same order)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from chunkls.search.maxscore import NUMPY_KERNEL
from chunkls.search.postings import (
    EMPTY,
    NO_SEGMENT,
    FileKey,
    Segment,
    Snapshot,
    concat_triples,
    docs_ascending,
    narrow_tfs,
    place,
)
from chunkls.search.scorer import Postings, Scorer
from chunkls.search.tokens import FileTerms, file_terms
from chunkls.search.vocabulary import Vocabulary

if TYPE_CHECKING:
    from chunkls.storage.mapped import Mapped

__all__ = ["BM25Index", "LearnedTerms"]

T = TypeVar("T")

_I32 = np.int32
_MERGE_AT = 100_000
"""Postings in the small write segment before it is merged into the main one."""
_MERGE_BATCH = 1 << 16
"""Postings a merge puts in place at a time (its temporaries are on top of the
merged postings: a bulk index's peak)."""
_QUERY_TERMS = 4096
"""Query tokens whose term ids are remembered (until the vocabulary is renumbered)."""


class LearnedTerms(NamedTuple):
    """A file's term ids, as ``BM25Index.learn_terms`` gave them."""

    generation: int
    """The vocabulary's generation then (its ids are stale once it changed)."""
    ids: npt.NDArray[np.int32]


class BM25Index(Generic[T]):
    """An incremental BM25 index of documents grouped by file; ties are ranked in
    corpus order (the file's key, then the document's position in it).

    Postings live in a large read-only segment plus a small one that takes
    writes. Removing a file marks its documents dead (document frequencies count
    live documents only); dead postings are dropped when the segments merge.
    """

    def __init__(self) -> None:
        self._vocabulary = Vocabulary()
        self._main = NO_SEGMENT
        self._small = NO_SEGMENT
        self._pending: list[tuple[npt.NDArray[np.int32], ...]] = []
        """(term ids, docs, tfs) added since the small segment was built."""
        self._pending_size = 0
        self._small_triples: list[tuple[npt.NDArray[np.int32], ...]] = []
        self._small_size = 0
        self._length = np.zeros(1024, dtype=_I32)
        """document id -> token count; -1 once the document is removed."""
        self.size = 0
        """Document ids handed out so far."""
        self._slots: list[tuple[FileKey, Sequence[T], int, int] | None] = []
        """file slot -> (file key, items, index of its first item in ``items``, its
        first document id); ``None`` once removed. Items are kept as the caller
        gave them (a lazy sequence costs nothing per document)."""
        self._slot_of: dict[FileKey, int] = {}
        self._doc_slot = np.zeros(1024, dtype=_I32)
        """document id -> its file's slot."""
        self._files: dict[FileKey, range] = {}
        """file key -> its document ids (consecutive)."""
        self.live = 0
        self._dead = 0
        self.total_length = 0
        self._version = 0
        """Bumped whenever documents are added or removed: kept term scores are stale."""
        self.scorer = Scorer()
        self._query_ids: dict[str, int] = {}
        """query token -> its term id, for tokens asked for lately (valid while the
        vocabulary's generation is)."""
        self._query_generation = -1
        self._mapped: Mapped | None = None
        """The postings file the main segment is read from in place, if it is."""

    def __len__(self) -> int:
        return self.live

    # -- writing ------------------------------------------------------------------

    def add_file(self, file_key: FileKey, docs: Iterable[tuple[str, T]]) -> None:
        """Index a file's documents (text to tokenize, item), replacing any before."""
        pairs = list(docs)
        self.add_file_terms(file_key, [item for _, item in pairs], file_terms(t for t, _ in pairs))

    def add_file_terms(
        self,
        file_key: FileKey,
        items: Sequence[T],
        terms: FileTerms,
        learned: LearnedTerms | None = None,
    ) -> None:
        """Index a file's documents from term counts computed elsewhere (with their
        term ids, when ``learn_terms`` gave them)."""
        if file_key in self._files:
            self.remove_file(file_key)
        self._version += 1
        lengths = np.frombuffer(terms.lengths, dtype=_I32)
        if len(lengths) != len(items):
            raise ValueError(f"{len(items)} items for {len(lengths)} documents")
        first = self._reserve(len(items))
        self._length[first : first + len(items)] = lengths
        self._add_slot(file_key, items, 0, first, len(items))
        self.live += len(items)
        self.total_length += int(lengths.sum())
        rows = np.frombuffer(terms.rows, dtype=_I32).reshape(3, -1)
        if rows.shape[1]:
            if learned is not None and learned.generation == self._vocabulary.generation:
                ids = learned.ids
            else:  # not learned, or renumbered since (terms no file used were dropped)
                ids = self._vocabulary.ids(terms.names())
            tfs = rows[2]  # kept 16-bit while waiting, when they fit (they are positive)
            tfs = tfs.astype(np.uint16) if int(tfs.max()) <= 0xFFFF else tfs.copy()
            self._pending.append((ids[rows[0]], rows[1] + first, tfs))
            self._pending_size += rows.shape[1]

    def learn_terms(self, terms: FileTerms) -> LearnedTerms:
        """Add a file's terms to the vocabulary only (a bulk load's first pass;
        its postings are added later with ``add_file_terms``, given what this returns)."""
        ids = self._vocabulary.ids(terms.names()) if terms.rows else EMPTY
        return LearnedTerms(self._vocabulary.generation, ids)

    def freeze_vocabulary(self, least: int = 0) -> None:
        """Fold the terms added since into the compact table (ids unchanged) if there
        are at least ``least`` (a rebuild for a few costs more than the dict)."""
        if len(self._vocabulary.added) >= least:
            self._vocabulary.freeze()

    def _add_slot(
        self, file_key: FileKey, items: Sequence[T], base: int, first: int, count: int
    ) -> None:
        slot = len(self._slots)
        self._slots.append((file_key, items, base, first))
        self._slot_of[file_key] = slot
        self._doc_slot[first : first + count] = slot
        self._files[file_key] = range(first, first + count)

    def _reserve(self, count: int) -> int:
        first = self.size
        needed = first + count
        if needed > len(self._length):
            more = np.zeros(max(needed, 2 * len(self._length)) - first, dtype=_I32)
            self._length = np.concatenate((self._length[:first], more))
            self._doc_slot = np.concatenate((self._doc_slot[:first], more))
        self.size = needed
        return first

    def remove_file(self, file_key: FileKey) -> None:
        """Drop a file's documents; scores become those of a build without it."""
        ids = self._files.pop(file_key, None)
        if ids is None or not len(ids):
            return
        self._version += 1
        lengths = self._length[ids.start : ids.stop]
        self.total_length -= int(lengths.sum())
        lengths[:] = -1
        self.live -= len(ids)
        self._dead += len(ids)
        self._slots[self._slot_of.pop(file_key)] = None

    def drop_caches(self) -> None:
        """Forget the term scores and query tokens kept between queries (the next
        query computes them again, as the first one after a change does)."""
        self.scorer.forget()
        self._query_ids.clear()

    def _settle(self) -> None:
        """Fold added postings into the segments before reading them."""
        if not self._pending:
            return
        self._small_triples.extend(self._pending)
        self._small_size += self._pending_size
        self._pending = []
        self._pending_size = 0
        if self._small_size >= _MERGE_AT or self._small_size >= len(self._main.docs):
            self._merge()
        else:
            self._small = Segment.build_sparse(*concat_triples(self._small_triples))

    def _merge(self) -> None:
        """One segment of live postings, documents renumbered without the dead, built
        a batch at a time (``_MERGE_BATCH``) so that it holds about one copy of them."""
        self._version += 1
        parts = [self._main.triples(), *self._small_triples, *self._pending]
        self._main = self._small = NO_SEGMENT
        self._mapped = None  # the new segment is on the heap
        self._pending, self._small_triples = [], []
        self._pending_size = self._small_size = 0
        new_of: npt.NDArray[np.int64] | None = None
        if self._dead:
            live = self._length[: self.size] >= 0
            renumber = np.cumsum(live, dtype=np.int64) - 1
            count = int(live.sum())
            self._length = self._length[: self.size][live].copy()
            # the live files' slots, renumbered in order, with their new first ids
            old_slots = self._doc_slot[: self.size][live]
            kept = [slot for slot, entry in enumerate(self._slots) if entry is not None]
            slot_of_old = np.full(max(len(self._slots), 1), -1, dtype=_I32)
            slot_of_old[kept] = np.arange(len(kept), dtype=_I32)
            before = np.zeros(self.size + 1, dtype=np.int64)  # live documents before each id
            np.cumsum(live, out=before[1:])
            slots: list[tuple[FileKey, Sequence[T], int, int] | None] = []
            for slot in kept:
                key, items, base, first = self._slots[slot]  # type: ignore[misc]
                slots.append((key, items, base, int(before[first])))
            self._slots = slots
            self._slot_of = {entry[0]: n for n, entry in enumerate(slots) if entry is not None}
            self._doc_slot = slot_of_old[old_slots].astype(_I32)
            self.size = count
            self._files = {
                key: range(int(renumber[r.start]), int(renumber[r.start]) + len(r)) if len(r) else r
                for key, r in self._files.items()
            }
            self._dead = 0
            renumber[~live] = -1
            new_of = renumber
        groups = _batches(parts)
        del parts
        # the postings of each term: counted first, so that each batch is put in place
        counts = np.zeros(len(self._vocabulary), dtype=np.int64)
        wide = False  # a term frequency over 16 bits
        for group in groups:
            terms = np.concatenate([part[0] for part in group])
            if new_of is not None:
                terms = terms[new_of[np.concatenate([part[1] for part in group])] >= 0]
            counts += np.bincount(terms, minlength=len(counts))
            wide = wide or any(int(part[2].max()) > 0xFFFF for part in group)
        # forget the terms no posting has any more (those of removed files)
        term_of = self._vocabulary.keep(counts > 0)
        if term_of is not None:
            counts = counts[counts > 0]
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        del counts
        docs = np.empty(int(offsets[-1]), dtype=_I32)
        # as ``narrow_tfs`` keeps them (they are never negative)
        tfs: npt.NDArray[np.int32] | npt.NDArray[np.uint16] = (
            np.empty(int(offsets[-1]), dtype=_I32)
            if wide
            else np.empty(int(offsets[-1]), dtype=np.uint16)
        )
        cursor = offsets[:-1].copy()
        # doc ids only grow from batch to batch, and a stable sort within one keeps
        # each term's documents in that order
        for n, group in enumerate(groups):
            groups[n] = []
            terms, group_docs, group_tfs = concat_triples(group)
            del group
            if new_of is not None:
                mapped = new_of[group_docs]
                keep = mapped >= 0
                terms, group_tfs = terms[keep], group_tfs[keep]
                group_docs = mapped[keep].astype(_I32)
            if term_of is not None:
                terms = term_of[terms]
            place(terms, group_docs, group_tfs, cursor, docs, tfs)
        self._main = Segment(offsets, docs, tfs)

    def release_pages(self) -> None:
        """Let the kernel take back the pages of a mapped snapshot read so far
        (after a pass that read all of them: a load, a save)."""
        if self._mapped is not None:
            self._mapped.release()

    def compact(self) -> None:
        """Merge everything into one segment and freeze the vocabulary."""
        if self._pending or self._small_triples or self._dead:
            self._merge()
        self._vocabulary.freeze()

    # -- snapshots ------------------------------------------------------------------

    def snapshot(self, keys: Iterable[FileKey]) -> Snapshot:
        """The postings of some files, documents renumbered from 0 in the order
        they are indexed in (so each term's documents stay ascending); nothing is
        merged or frozen, so it costs memory in proportion to its postings."""
        self._settle()  # every posting in the main or the small segment
        files = [(key, self._files[key]) for key in keys if key in self._files]
        files.sort(key=lambda pair: pair[1].start)
        main = self._main
        if (
            not self._dead
            and not len(self._small.docs)
            and sum(len(r) for _, r in files) == self.size
            and len(main.offsets) == len(self._vocabulary) + 1
            and bool(np.all(main.offsets[1:] > main.offsets[:-1]))
        ):
            # every document in the main segment, every term used (as after a
            # compaction): the segment as it is, documents and terms numbered alike
            identity = np.arange(len(self._vocabulary), dtype=_I32)
            return Snapshot(
                [(key, len(r)) for key, r in files],
                self._vocabulary.select(identity),
                main,
                self._length[: self.size].copy(),
            )
        old = np.concatenate(
            [np.arange(r.start, r.stop, dtype=np.int64) for _, r in files]
            or [np.zeros(0, np.int64)]
        )
        new_of = np.full(self.size, -1, dtype=np.int64)
        new_of[old] = np.arange(len(old))
        wanted = new_of >= 0
        parts: list[tuple[npt.NDArray[Any], ...]] = []
        # the small segment's documents all came after the main one's: per term,
        # main's postings then small's stay in ascending document order
        for segment in (self._main, self._small):
            if not len(segment.docs):
                continue
            at = np.flatnonzero(wanted[segment.docs])
            terms = segment.row_terms(np.searchsorted(segment.offsets, at, side="right") - 1)
            parts.append((terms, new_of[segment.docs[at]].astype(_I32), segment.tfs[at]))
        terms, local_docs, tfs = concat_triples(parts)
        used = np.unique(terms)
        local = np.full(len(self._vocabulary), -1, dtype=_I32)
        local[used] = np.arange(len(used), dtype=_I32)
        segment = Segment.build(local[terms], local_docs, tfs.astype(_I32, copy=False), len(used))
        return Snapshot(
            [(key, len(r)) for key, r in files],
            self._vocabulary.select(local),
            segment,
            self._length[old].copy(),
        )

    def load_snapshot(
        self, snapshot: Snapshot, items: Sequence[T], gone: Collection[FileKey] = ()
    ) -> None:
        """Add the files of a snapshot (none indexed already); those in ``gone`` are
        added removed (postings are taken whole, so a mapped snapshot stays mapped)."""
        lengths = snapshot.lengths
        if len(lengths) != len(items) or sum(n for _, n in snapshot.files) != len(items):
            raise ValueError("snapshot and items disagree")
        if any(key in self._files for key, _ in snapshot.files if key not in gone):
            raise ValueError("snapshot files are indexed already")
        self._version += 1
        first = self._reserve(len(items))
        added = self._length[first : first + len(items)]
        added[:] = lengths
        doc = first
        for key, count in snapshot.files:
            if key in gone:
                self._length[doc : doc + count] = -1
                self._dead += count
            else:
                self._add_slot(key, items, doc - first, doc, count)
                self.live += count
            doc += count
        self.total_length += int(added[added >= 0].sum())
        if not len(self._vocabulary) and not len(self._main.docs) and first == 0:
            self._vocabulary = Vocabulary(snapshot.terms)
            main = docs_ascending(snapshot.segment)
            self._main = Segment(main.offsets, main.docs, narrow_tfs(main.tfs))
            if main.docs is snapshot.segment.docs:  # not copied: still the file's
                self._mapped = snapshot.mapped
            return
        ids = self._vocabulary.ids(snapshot.terms.names())
        terms, docs, tfs = docs_ascending(snapshot.segment).triples()
        self._pending.append((ids[terms], docs + first, tfs))
        self._pending_size += len(docs)

    # -- reading: the scorer's postings source ----------------------------------------

    kernel = NUMPY_KERNEL
    """The scorer's operations on these postings (``chunkls.search.scorer``)."""

    @property
    def version(self) -> int:
        self._settle()
        return self._version

    def postings(self, tokens: Sequence[str]) -> list[Postings | None]:
        """Each token's live documents (ascending), frequencies and lengths."""
        self._settle()
        found: list[Postings | None] = []
        for term in self._query_term_ids(tokens):
            if term is None:
                found.append(None)
                continue
            docs, tfs = self._main.postings(term)
            if len(self._small.docs):
                more_docs, more_tfs = self._small.postings(term)
                if len(more_docs):
                    docs = np.concatenate([docs, more_docs])
                    tfs = np.concatenate([tfs, more_tfs])
            dl = self._length[docs]
            if self._dead:
                alive = dl >= 0
                docs, tfs, dl = docs[alive], tfs[alive], dl[alive]
            found.append(Postings(docs, tfs, dl) if len(docs) else None)
        return found

    def terms_starting(self, prefix: str, limit: int) -> list[str]:
        """The first ``limit`` terms that start with ``prefix``, sorted (a term
        whose documents are all gone may be among them: it has no postings)."""
        self._settle()
        return self._vocabulary.starting(prefix, limit)

    def _query_term_ids(self, tokens: Sequence[str]) -> list[int | None]:
        """The term id of each query token (``None``: not in the vocabulary)."""
        vocabulary = self._vocabulary
        known = self._query_ids
        if self._query_generation != vocabulary.generation:
            known.clear()
            self._query_generation = vocabulary.generation
        ids: list[int | None] = list(map(known.get, tokens))
        if None in ids:
            missing = [i for i, term in enumerate(ids) if term is None]
            found = vocabulary.get_many([tokens[i] for i in missing])
            if len(known) + len(missing) > _QUERY_TERMS:
                known.clear()
            for i, term in zip(missing, found, strict=True):
                ids[i] = term
                if term is not None:  # an unknown one is asked again: a file may add it
                    known[tokens[i]] = term
        return ids

    def order_key(self, doc: int) -> tuple[FileKey, int]:
        """A document's place in corpus order: its file's key, its position there."""
        entry = self._slots[int(self._doc_slot[doc])]
        assert entry is not None
        return entry[0], doc - entry[3]

    def length(self, doc: int) -> int:
        """A document's length in tokens."""
        return int(self._length[doc])

    def item(self, doc: int) -> T:
        """What a document was added with."""
        entry = self._slots[int(self._doc_slot[doc])]
        assert entry is not None
        _, items, base, first = entry
        return items[base + doc - first]

    def file_keys(self) -> list[FileKey]:
        """Every indexed file."""
        return list(self._files)


def _batches(
    parts: list[tuple[npt.NDArray[np.int32], ...]],
) -> list[list[tuple[npt.NDArray[np.int32], ...]]]:
    """(term ids, docs, tfs) triples in groups of about ``_MERGE_BATCH`` postings,
    in order."""
    groups: list[list[tuple[npt.NDArray[np.int32], ...]]] = []
    group: list[tuple[npt.NDArray[np.int32], ...]] = []
    size = 0
    for part in parts:
        if not len(part[0]):
            continue
        group.append(part)
        size += len(part[0])
        if size >= _MERGE_BATCH:
            groups.append(group)
            group, size = [], 0
    if group:
        groups.append(group)
    return groups
