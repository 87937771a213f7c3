"""Fuzzy names: the symbol table's names (``definitions``) that a mistyped or
abbreviated one stands for, when no name is it, has it as a part or starts with it.

Two tiers, as VS Code's own fuzzy matching and a spelling check do: the names
that hold what was typed as an in-order subsequence (``bmodel``, ``BsModel`` ->
``basemodel``; ``Greter`` -> ``greeter``), else those one edit away (a letter
replaced, added, dropped, or two swapped: ``Graeter`` -> ``greeter``). A tier's
names rank by a clear score: what was typed begins at a part's start (the name's
first letter, or one after ``_``), fewer contiguous runs, more of them starting
a part, shorter names, then the name. Each query reads the names once from the
postings (kept until they change) and matches them with one regular expression
over all of them, so a query costs milliseconds on the stdlib.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from weakref import WeakKeyDictionary

from chunkls.search.definitions import INNER, OWN, PART
from chunkls.search.scorer import PostingsSource

MIN_TYPED = 3
"""Shortest typed name matched fuzzily (shorter ones match too much)."""
MAX_NAMES = 10_000_000
"""(Every name of a prefix.)"""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class NameTable(NamedTuple):
    """Every distinct name the table keeps (own and inner, lowercase), one a line."""

    version: int
    lines: str


_KEPT: WeakKeyDictionary[object, NameTable] = WeakKeyDictionary()


def name_table(source: PostingsSource) -> NameTable:
    """The names of ``source``'s symbol table (kept until its version changes)."""
    kept = _KEPT.get(source)
    if kept is None or kept.version != source.version:
        names = {term[1:] for term in source.terms_starting(OWN, MAX_NAMES)}
        names.update(term[1:] for term in source.terms_starting(INNER, MAX_NAMES))
        kept = NameTable(source.version, "\n" + "\n".join(sorted(names)) + "\n")
        _KEPT[source] = kept
    return kept


def applies(source: PostingsSource, typed: str) -> bool:
    """Whether ``typed`` is one name no symbol-table name is, has as a part or
    starts with (then the fuzzy names answer it)."""
    if len(typed) < MIN_TYPED or not _IDENTIFIER.fullmatch(typed):
        return False
    name = typed.lower()
    exact = source.postings([OWN + name, INNER + name, PART + name])
    if any(postings is not None for postings in exact):
        return False
    return not any(source.terms_starting(prefix + name, 1) for prefix in (OWN, INNER))


def _subsequence(name: str) -> re.Pattern[str]:
    """A line holding ``name``'s letters in order (leftmost, no backtracking blow-up)."""
    parts = [f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in name]
    return re.compile("\\n(" + "".join(parts) + "[^\\n]*+)(?=\\n)")


def _one_edit(name: str) -> re.Pattern[str]:
    """A line one edit away from ``name``."""
    escape = re.escape
    alternatives = set()
    for i in range(len(name) + 1):
        alternatives.add(escape(name[:i]) + "[^\\n]" + escape(name[i:]))  # one added
        if i < len(name):
            alternatives.add(escape(name[:i]) + "[^\\n]" + escape(name[i + 1 :]))  # replaced
            alternatives.add(escape(name[:i]) + escape(name[i + 1 :]))  # dropped
        if i + 1 < len(name):
            swapped = name[:i] + name[i + 1] + name[i] + name[i + 2 :]
            alternatives.add(escape(swapped))
    return re.compile("\\n(" + "|".join(sorted(alternatives)) + ")(?=\\n)")


def score(typed: str, name: str) -> tuple[int, int, int, int, str]:
    """A fuzzy name's sort key (smaller is better): ``typed`` (lowercase) begins
    at a part's start, its contiguous runs, the runs that start a part, the
    name's length, the name. Letters match leftmost, each run kept as long as it goes."""
    at = -1
    runs = starts = 0
    first = True
    first_at_part = False
    for letter in typed:
        found = name.find(letter, at + 1)
        if found < 0:  # (one edit away: not a subsequence)
            return (1, len(typed), 0, len(name), name)
        if found != at + 1 or first:
            runs += 1
            starts += found == 0 or name[found - 1] == "_"
            if first:
                first_at_part = found == 0 or name[found - 1] == "_"
                first = False
        at = found
    return (0 if first_at_part else 1, runs, -starts, len(name), name)


def fuzzy_names(source: PostingsSource, typed: str, limit: int) -> list[str]:
    """The symbol-table names ``typed`` stands for, best first, at most ``limit``
    (none unless ``applies``): its subsequence matches, else those one edit away."""
    if not applies(source, typed):
        return []
    name = typed.lower()
    lines = name_table(source).lines
    for pattern in (_subsequence(name), _one_edit(name)):
        found = [match[1] for match in pattern.finditer(lines)]
        if found:
            found.sort(key=lambda candidate: score(name, candidate))
            return found[:limit]
    return []
