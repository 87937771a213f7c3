"""Fuzzy names: the symbol table's names a mistyped or abbreviated one stands for (which
and in what order: ``docs/search.md``). The names are read once from the postings, with bit
masks of their letters: a query picks its candidates at once, then one regular expression."""

from __future__ import annotations

import re
from typing import NamedTuple
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt

from chunkls.search.definitions import INNER, OWN, PART
from chunkls.search.scorer import PostingsSource

MIN_TYPED = 3
"""Shortest typed name matched fuzzily (shorter ones match too much)."""
MAX_NAMES = 10_000_000
"""(Every name of a prefix.)"""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class NameTable(NamedTuple):
    """Every distinct name the table keeps (lowercase), the bit masks of ``masks``, and
    all of them as a set."""

    version: int
    names: list[str]
    letters: npt.NDArray[np.uint64]
    twice: npt.NDArray[np.uint64]
    starts: npt.NDArray[np.uint64]
    every: frozenset[str]


def _byte_bit(byte: int) -> int:
    """A byte's bit in a mask (``a``-``z``, digits and ``_`` have their own)."""
    if 97 <= byte <= 122:
        return 1 << (byte - 97)
    if 48 <= byte <= 57:
        return 1 << (byte - 48 + 26)
    return 1 << 36 if byte == 95 else 1 << (37 + byte % 27)


_BITS = np.array([_byte_bit(byte) for byte in range(256)], dtype=np.uint64)
_BIT_NUMBERS = np.array([_byte_bit(byte).bit_length() - 1 for byte in range(256)], np.uint32)
_UNDERSCORE = 95


def masks(
    names: list[str],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Each name's letters, those it has twice or more, and those its parts
    begin with (after ``_`` or at its start), as bit masks, all at once."""
    count = len(names)
    encoded = [name.encode("utf-8") for name in names]
    lengths = np.fromiter(map(len, encoded), np.int64, count)
    if not count or not lengths.all():
        empty = np.zeros(count, np.uint64)
        return empty, empty, empty
    data = np.frombuffer(b"".join(encoded), np.uint8)
    offsets = np.zeros(count, np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    bits = _BITS[data]
    letters = np.bitwise_or.reduceat(bits, offsets)
    previous = np.empty_like(data)
    previous[0] = _UNDERSCORE
    previous[1:] = data[:-1]
    previous[offsets] = _UNDERSCORE
    at_start = (previous == _UNDERSCORE) & (data != _UNDERSCORE)
    starts = np.bitwise_or.reduceat(np.where(at_start, bits, np.uint64(0)), offsets)
    # a name's repeated letters: (name, letter's bit) keys, sorted (nearly so
    # already: a stable sort runs through them), equal to the one before
    owners = np.repeat(np.arange(count, dtype=np.uint32), lengths) * np.uint32(64)
    keys = np.sort(owners + _BIT_NUMBERS[data], kind="stable")
    again = keys[1:][keys[1:] == keys[:-1]]
    twice = np.zeros(count, np.uint64)
    np.bitwise_or.at(twice, again >> 6, np.left_shift(np.uint64(1), (again & 63).astype(np.uint64)))
    return letters, twice, starts


_KEPT: WeakKeyDictionary[object, NameTable] = WeakKeyDictionary()


def name_table(source: PostingsSource) -> NameTable:
    """The names of ``source``'s symbol table (kept until its version changes)."""
    kept = _KEPT.get(source)
    if kept is None or kept.version != source.version:
        every = {term[1:] for term in source.terms_starting(OWN, MAX_NAMES)}
        every.update(term[1:] for term in source.terms_starting(INNER, MAX_NAMES))
        names = list(every)
        kept = NameTable(source.version, names, *masks(names), frozenset(every))
        _KEPT[source] = kept
    return kept


def candidates(table: NameTable, name: str) -> list[str]:
    """The names holding every letter of ``name`` (up to twice), a part beginning with its
    first (a superset of its subsequence matches)."""
    (wanted,), (wanted_twice,), _ = masks([name])
    first = _BITS[name.encode("utf-8")[0]]
    picked = ((table.letters & wanted) == wanted) & ((table.twice & wanted_twice) == wanted_twice)
    if name[0] != "_":
        picked &= (table.starts & first) != 0
    return [table.names[index] for index in np.flatnonzero(picked).tolist()]


def applies(source: PostingsSource, typed: str) -> bool:
    """Whether ``typed`` is one name no table name is, has as a part or starts with."""
    if len(typed) < MIN_TYPED or not _IDENTIFIER.fullmatch(typed):
        return False
    name = typed.lower()
    exact = source.postings([OWN + name, INNER + name, PART + name])
    if any(postings is not None for postings in exact):
        return False
    return not any(source.terms_starting(prefix + name, 1) for prefix in (OWN, INNER))


def _subsequence(name: str) -> re.Pattern[str]:
    """A line holding ``name``'s letters in order, its first beginning a part
    (as VS Code's fuzzy match asks), the rest leftmost (no backtracking blow-up)."""
    first = re.escape(name[0])
    rest = "".join(f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in name[1:])
    return re.compile(f"\\n([^\\n]*?(?<![^\\n_]){first}{rest}[^\\n]*+)(?=\\n)")


def _one_edit(name: str, names: frozenset[str]) -> list[str]:
    """The names one edit away from ``name`` (a few hundred set lookups)."""
    letters = "abcdefghijklmnopqrstuvwxyz0123456789_"
    found = set()
    for i in range(len(name) + 1):
        for letter in letters:
            found.add(name[:i] + letter + name[i:])
            if i < len(name):
                found.add(name[:i] + letter + name[i + 1 :])
        if i < len(name):
            found.add(name[:i] + name[i + 1 :])
        if i + 1 < len(name):
            found.add(name[:i] + name[i + 1] + name[i] + name[i + 2 :])
    found.discard(name)
    return sorted(found & names)


def score(typed: str, name: str) -> tuple[int, int, str]:
    """A fuzzy name's sort key, smaller first (``docs/search.md``); letters match leftmost."""
    runs = starts = 0
    at = -1
    for index, letter in enumerate(typed):
        found = name.find(letter, at + 1)
        while index == 0 and found > 0 and name[found - 1] != "_":
            found = name.find(letter, found + 1)
        if found < 0:  # (one edit away: not a subsequence)
            return (1, len(name), name)
        if found != at + 1 or index == 0:
            runs += 1
            starts += found == 0 or name[found - 1] == "_"
        at = found
    return (runs - starts, len(name), name)


def fuzzy_names(source: PostingsSource, typed: str, limit: int) -> list[str]:
    """The table names ``typed`` stands for, best first, at most ``limit`` (if ``applies``)."""
    if not applies(source, typed):
        return []
    name = typed.lower()
    table = name_table(source)
    lines = "\n" + "\n".join(candidates(table, name)) + "\n"
    found = {match[1] for match in _subsequence(name).finditer(lines)}
    found.update(_one_edit(name, table.every))
    return sorted(found, key=lambda candidate: score(name, candidate))[:limit]
