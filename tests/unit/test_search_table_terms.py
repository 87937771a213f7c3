"""The symbol table's terms of a file (``table_terms``, ``chunk_terms``) are byte
for byte those of the per-term forms first written (the oracles below): the
same terms, in the same order, the same rows, the same lengths."""

from __future__ import annotations

from array import array
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.search.definitions import INNER, OWN, PART, _named, chunk_terms, own_name
from chunkls.search.tokens import FileTerms, file_terms, tokenize


class Chunk(NamedTuple):
    chunk_id: str
    text: str
    source_path: str
    symbol: str | None


def _table_terms_per_name(
    chunk_id: str, text: str, source_path: str, symbol: str | None
) -> list[str]:
    """``table_terms`` as first written: each name lowered and tokenized alone."""
    kind = chunk_id[len(source_path) + 1 :].split("-", 1)[0]
    terms = []
    own = own_name(symbol)
    if own is not None:
        terms.append(OWN + own)
    if not source_path.endswith(".py") and not source_path.endswith(".pyi"):
        return terms
    parts: dict[str, None] = {}
    for index, (written, _, _, _) in enumerate(_named(text, kind)):
        name = written.lower()
        if name == own and index == 0:
            continue
        terms.append(INNER + name)
        parts.update(dict.fromkeys(tokenize(written)))
    return terms + [PART + part for part in parts]


def _chunk_terms_per_term(chunks: list[Chunk]) -> FileTerms:
    """``chunk_terms`` as first written: each table term merged in one at a time."""
    terms = file_terms(f"{chunk.chunk_id}\n{chunk.text}" for chunk in chunks)
    extra = [_table_terms_per_name(*chunk) for chunk in chunks]
    if not any(extra):
        return terms
    names = list(terms.names())
    local = {name: index for index, name in enumerate(names)}
    rows = array("i", terms.rows)
    third = len(rows) // 3
    term_index, positions, frequencies = rows[:third], rows[third : 2 * third], rows[2 * third :]
    for position, chunk_terms_ in enumerate(extra):
        counts: dict[str, int] = {}
        for term in chunk_terms_:
            counts[term] = counts.get(term, 0) + 1
        for term, count in counts.items():
            index = local.get(term)
            if index is None:
                index = local[term] = len(names)
                names.append(term)
            term_index.append(index)
            positions.append(position)
            frequencies.append(count)
    rows_bytes = term_index.tobytes() + positions.tobytes() + frequencies.tobytes()
    return FileTerms(tuple(names), rows_bytes, terms.lengths)


LINES = [
    "class Client:",
    "class Client(Base):",
    "    def session(self):",
    "    async def close_connection(self):",
    "\tdef tabbed(self): pass",
    "        def inner(): pass",
    "    class Options:",
    "    def getHTTPResponse2(self): ...",
    "    def __init__(self):",
    "    def __init__(self, other):",  # a name defined twice: counted twice
    "def client(): pass",  # the own name again, lowercase
    "def Ärger_über(): pass",
    "def İstanbul(): pass",
    "def 日本語_テキスト(): pass",
    "Alias = Client",
    "TIMEOUT: int = (",
    "__all__ = ['Client']",
    "x == 1",
    "value = default",
    "    # def commented(self):",
    "    return 'class Fake: def fake'",
    "@decorated",
    "",
    "    ",
]
KINDS = ["class", "function", "module", "heading", "section"]
SOURCES = ["pkg/a.py", "pkg/a.pyi", "README.md", "notes.txt"]
SYMBOLS = [None, "<module>", "Client", "client", "Outer.Client", "Setup guide", "İstanbul", ""]

chunk_lists = st.lists(
    st.builds(
        lambda kind, name, source, lines, symbol: Chunk(
            f"{source}#{kind}-{name}", "\n".join(lines), source, symbol
        ),
        st.sampled_from(KINDS),
        st.sampled_from(["Client", "1", "setup-guide", "f"]),
        st.sampled_from(SOURCES),
        st.lists(st.sampled_from(LINES), max_size=30),
        st.sampled_from(SYMBOLS),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(chunk_lists)
def test_a_files_table_terms_are_those_merged_term_by_term(chunks: list[Chunk]) -> None:
    from chunkls.search.definitions import table_terms

    for chunk in chunks:
        assert table_terms(*chunk) == _table_terms_per_name(*chunk)
    assert chunk_terms(chunks) == _chunk_terms_per_term(chunks)


@pytest.mark.parametrize(
    "chunks",
    [
        [],
        [Chunk("a.md#heading-setup", "# Setup\ndef x(): pass", "a.md", "Setup")],
        [Chunk("a.py#module-1", "import os", "a.py", None)],  # no table term at all
        [Chunk("a.py#class-Client", "\n".join(LINES), "a.py", "Client")] * 3,
        # many documents: the documents' terms counted with numpy, the table's after them
        [
            Chunk(f"a.py#function-f{i}", f"def f{i}(x):\n    return x + {i}\n", "a.py", f"f{i}")
            for i in range(120)
        ]
        + [Chunk("a.py#module-2", "\n".join(LINES), "a.py", None)],
    ],
)
def test_known_files_table_terms(chunks: list[Chunk]) -> None:
    assert chunk_terms(chunks) == _chunk_terms_per_term(chunks)
