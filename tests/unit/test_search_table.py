"""The symbol table (``chunkls.search.definitions``) and the ranking it feeds: the
names each chunk defines, each with its lines; a class named exactly is first
whatever its length; one result per chunk ID; each result's best part."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.index import named
from chunkls.index.session import build_index
from chunkls.search import definitions, hybrid
from chunkls.search.definitions import (
    INNER,
    OWN,
    PART,
    Definition,
    best_part,
    chunk_terms,
    table_terms,
)
from chunkls.search.tokens import file_terms, tokenize

from .strategies import write_tree

CLASS_TEXT = '''@decorated
class Client:
    """A client."""

    @property
    def session(
        self,
    ) -> int:
        return 1

    async def close_connection(self):
        def inner():
            pass
        return inner

    class Options:
        retries = 3'''


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        (
            CLASS_TEXT,
            "class",
            [
                Definition("Client", "class", 0, 16),
                Definition("session", "function", 4, 8),
                Definition("close_connection", "function", 10, 13),
                Definition("inner", "function", 11, 12),
                Definition("Options", "class", 15, 16),
            ],
        ),
        (
            "import os\n\nAlias = Client\nTIMEOUT: int = (\n    3\n)\n__all__ = []\nx == 1",
            "module",
            [Definition("Alias", "variable", 2, 2), Definition("TIMEOUT", "variable", 3, 5)],
        ),
        ("def f():\n    return 'def'", "function", [Definition("f", "function", 0, 1)]),
        ("x = 1", "function", []),  # (assignments count in module chunks only)
    ],
)
def test_the_names_a_chunk_defines_with_their_lines(
    text: str, kind: str, expected: list[Definition]
) -> None:
    assert definitions.definitions(text, kind) == expected


def test_a_chunks_table_terms() -> None:
    terms = table_terms("a.py#class-Client", CLASS_TEXT, "a.py", "Client")
    assert terms[0] == OWN + "client"
    assert INNER + "client" not in terms  # (its own definition is the whole)
    assert {INNER + "session", INNER + "close_connection", INNER + "options"} <= set(terms)
    assert {PART + "close", PART + "connection", PART + "close_connection"} <= set(terms)
    # a heading's text is no name; Markdown defines nothing inside
    assert (
        table_terms("a.md#heading-setup-guide", "# Setup guide\ndef x", "a.md", "Setup guide") == []
    )


def test_the_table_adds_postings_but_no_length() -> None:
    """BM25's documents are the tutorial's: the same lengths, the same terms."""

    class Chunk:
        def __init__(self, chunk_id: str, text: str, symbol: str | None) -> None:
            self.chunk_id, self.text, self.source_path, self.symbol = chunk_id, text, "a.py", symbol

    chunks = [
        Chunk("a.py#class-Client", CLASS_TEXT, "Client"),
        Chunk("a.py#module-1", "x = 1", None),
    ]
    plain = file_terms(f"{chunk.chunk_id}\n{chunk.text}" for chunk in chunks)
    both = chunk_terms(chunks)
    assert both.lengths == plain.lengths
    names = list(both.names())
    assert names[: len(plain.names())] == list(plain.names())
    assert all(name[0] in OWN + INNER + PART for name in names[len(plain.names()) :])


def test_a_class_named_exactly_is_first_whatever_its_length(tmp_path: Path) -> None:
    """A 3,000-line class against forty short functions with its words in their names."""
    methods = "".join(f"    def step{i}(self):\n        return {i}\n\n" for i in range(1500))
    decoys = "".join(
        f"def base_model_helper{i}(model):\n    return model.base_model{i}\n\n" for i in range(40)
    )
    write_tree(tmp_path, {"main.py": f"class BaseModel:\n{methods}", "helpers.py": decoys})
    index = build_index([tmp_path])
    for query in ("BaseModel", "basemodel", "base model", "BASEMODEL"):
        hits = index.queries.search(query, 10, "hybrid")
        assert hits[0].item.chunk.chunk_id == "main.py#class-BaseModel", query
        chunk = hits[0].item.chunk
        assert hits[0].lines == (1, chunk.end_line)  # the class named: the whole of it


def test_a_method_is_found_by_its_name_with_its_lines(tmp_path: Path) -> None:
    methods = "".join(f"    def step{i}(self):\n        return {i}\n\n" for i in range(300))
    body = f"class Parser:\n{methods}    def parse_header(self, line):\n        return line\n"
    decoys = "".join(f"def parse{i}(header):\n    return header\n\n" for i in range(80))
    write_tree(tmp_path, {"parser.py": body, "decoys.py": decoys})
    index = build_index([tmp_path])
    hits = index.queries.search("parse_header", 5, "hybrid")
    assert hits[0].item.chunk.chunk_id == "parser.py#class-Parser"
    assert hits[0].part == "parse_header"
    assert hits[0].lines == (902, 903)


@pytest.mark.parametrize("mode", ["hybrid", "bm25"])
@pytest.mark.parametrize("query", ["parse_header", "parse header line", "step7 return", "zzz"])
def test_a_listing_is_the_search_without_texts(tmp_path: Path, query: str, mode: str) -> None:
    """``listing`` gives ``search``'s hits in its order, each chunk as its stub (every
    field but the text, its first line and last line's end as the text has them) at
    its whole lines; ``best_lines`` gives each the lines and part ``search`` gives it."""
    methods = "".join(f"    def step{i}(self):\n        return {i}\n\n" for i in range(40))
    body = f"class Parser:\n{methods}    def parse_header(self, line):\n        return line\n"
    decoys = "".join(f"def parse{i}(header):\n    return header  # é\n\n" for i in range(8))
    write_tree(tmp_path, {"parser.py": body, "decoys.py": decoys, "n.md": "# Parse\n\nheader\n"})
    queries = build_index([tmp_path]).queries
    full = queries.search(query, 20, mode)
    listed = queries.listing(query, 20, mode)
    assert [(h.item.folder, h.score) for h in listed] == [(h.item.folder, h.score) for h in full]
    for hit, whole in zip(listed, full, strict=True):
        chunk, text = hit.item.chunk, whole.item.chunk
        assert chunk[:6] == (*text[:1], *text[2:])  # (LocatedChunk's fields but its text)
        assert (chunk.first_line, chunk.last_end) == (text.first_line, text.last_end)
        assert chunk.identity == text.identity
        assert hit.lines == (chunk.start_line, chunk.end_line) and hit.part is None
    assert [queries.best_lines(h.item, query, mode) for h in full] == [
        (h.lines, h.part) for h in full
    ]
    if query.startswith("parse"):
        assert any(h.part == "parse_header" for h in full)  # (a part differs from its chunk)
    if query == "parse header line":
        assert any(isinstance(h.item.chunk.last_end, str) for h in listed)  # (not ASCII)


@pytest.mark.parametrize("query", ["parse_header", "parse header line", "step7 return", "Parsr"])
def test_symbols_listed_for_a_resolving_client_read_only_what_they_show(
    tmp_path: Path, query: str
) -> None:
    """``symbol_search(parts=False)`` (a client that resolves a symbol's range) reads
    the texts of the fuzzy hits and of the chunks defining a name with a query word
    (they list that name at its lines, as ``parts=True`` does); the rest are stubs."""
    methods = "".join(f"    def step{i}(self):\n        return {i}\n\n" for i in range(40))
    body = f"class Parser:\n{methods}    def parse_header(self, line):\n        return line\n"
    decoys = "".join(f"def parse{i}(header):\n    return header\n\n" for i in range(8))
    write_tree(tmp_path, {"parser.py": body, "decoys.py": decoys, "n.md": "# Parse\n\nheader\n"})
    queries = build_index([tmp_path]).queries
    eager, fuzzy = queries.symbol_search(query, 20, "hybrid")
    lazy, lazy_fuzzy = queries.symbol_search(query, 20, "hybrid", parts=False)
    assert lazy_fuzzy == fuzzy
    assert [(h.score, h.item.chunk.chunk_id) for h in lazy] == [
        (h.score, h.item.chunk.chunk_id) for h in eager
    ]
    read = [n for n, h in enumerate(lazy) if hasattr(h.item.chunk, "text")]
    named = [n for n, h in enumerate(eager) if n < fuzzy or h.part is not None]
    assert set(named) <= set(read)
    for number, (hit, whole) in enumerate(zip(lazy, eager, strict=True)):
        if number in read:
            assert hit == whole
        else:
            assert hit.part is None and hit.lines == (
                whole.item.chunk.start_line,
                whole.item.chunk.end_line,
            )
    assert fuzzy == len(lazy) or len(read) < len(lazy)  # (the rest listed without texts)


def test_a_resolving_client_gets_the_named_parts_of_only_the_first_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beyond ``LISTED_PARTS`` hits, a chunk defining a queried name is a stub too."""
    files = {
        f"m{i}.py": f"class Holder{i}:\n    def parse_header(self):\n        pass\n"
        for i in range(6)
    }
    write_tree(tmp_path, files)
    queries = build_index([tmp_path]).queries
    lazy, _ = queries.symbol_search("parse header", 10, "hybrid", parts=False)
    assert len(lazy) == 6 and all(h.part == "parse_header" for h in lazy)
    monkeypatch.setattr(named, "LISTED_PARTS", 2)
    capped, _ = queries.symbol_search("parse header", 10, "hybrid", parts=False)
    assert [h.item.chunk.chunk_id for h in capped] == [h.item.chunk.chunk_id for h in lazy]
    assert capped[:2] == lazy[:2]
    assert all(h.part is None and not hasattr(h.item.chunk, "text") for h in capped[2:])


def test_a_file_change_updates_the_table(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "class Store:\n    def put(self):\n        pass\n"})
    index = build_index([tmp_path])
    assert index.queries.search("evict_oldest", 5, "hybrid") == []
    (tmp_path / "a.py").write_text(
        "class Store:\n    def put(self):\n        pass\n\n"
        "    def evict_oldest(self):\n        pass\n"
    )
    index.refresh(index.queries.folders[0], ["a.py"])  # (as a save does)
    hits = index.queries.search("evict_oldest", 5, "hybrid")
    assert [(hit.item.chunk.chunk_id, hit.part, hit.lines) for hit in hits] == [
        ("a.py#class-Store", "evict_oldest", (5, 6))
    ]


@pytest.mark.parametrize("mode", ["hybrid", "bm25"])
def test_overloads_of_one_id_are_one_result(tmp_path: Path, mode: str) -> None:
    overloads = (
        "".join(f"@overload\ndef parse(value: int{i}) -> int: ...\n" for i in range(5))
        + "def parse(value):\n    return value\n"
    )
    write_tree(tmp_path, {"p.py": overloads, "q.py": "def parse_value(value):\n    return 1\n"})
    index = build_index([tmp_path])
    ids = [hit.item.chunk.chunk_id for hit in index.queries.search("parse value", 10, mode)]
    assert len(ids) == len(set(ids))
    assert set(ids) == {"p.py#function-parse", "q.py#function-parse_value"}


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["greeting"], (4, 5, "set_greeting")),  # a part's name
        (["polite"], (1, 8, None)),  # the head (docstring): the whole chunk
        (["Greeter".lower()], (1, 8, None)),  # the chunk's own name
        (["nothing"], (1, 8, None)),
    ],
)
def test_the_best_part_of_a_chunk(words: list[str], expected: tuple[int, int, str | None]) -> None:
    text = (
        'class Greeter:\n    """Polite."""\n\n    def set_greeting(self, greeting):\n'
        "        self.greeting = greeting\n\n    def other(self):\n        pass"
    )
    assert best_part("Greeter", text, "class", 1, 8, True, words) == expected


def _best_part_by_copies(
    symbol: str | None, text: str, kind: str, start: int, end: int, words: list[str]
) -> tuple[int, int, str | None]:
    """``best_part`` as first written: each part's lines copied and counted (the oracle)."""
    parts = definitions.passages(text, kind, start, True)
    wanted = [word for word in dict.fromkeys(words) if word]
    if not parts or not wanted:
        return start, end, None
    own_words = set(tokenize(symbol.rsplit(".", 1)[-1])) if symbol else set()
    own_hits = sum(word in own_words for word in wanted)
    lines = text.lower().split("\n")
    best: tuple[int, int, str | None] = (start, end, None)
    head = "\n".join(lines[: max(parts[0].start_line - start, 1)])
    best_score = float(sum(min(head.count(word), 3) for word in wanted))
    for part in parts:
        body = "\n".join(lines[part.start_line - start : part.end_line - start + 1])
        named = set(tokenize(part.name)) if part.name else set()
        hits = sum(word in named for word in wanted if word not in own_words)
        if own_hits and not hits:
            continue
        score = 3.0 * hits + sum(min(body.count(word), 3) for word in wanted)
        if score > best_score:
            best, best_score = (part.start_line, part.end_line, part.name or None), score
    return best


WORDS = [
    *("value", "get", "set", "ping", "inner", "x", "al", "İ", "init", "get_value"),
    *("getvalue_x_y", "x_y", "http", "httpserver_base", "server", "\u03b1\u03c3", "\u03b1\u03c2"),
]
"""Query words of the best part's oracle test (Greek: a final sigma lowers apart)."""


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(
        st.sampled_from(
            [
                "    def get_value(self):",
                "        return self.value",
                "    def set_value(self, value):",
                '        """Set the value, the value."""',
                "",
                "    # value value value value",
                "    class Inner:",
                "        def ping(self): pass",
                "    İstanbul = 'value'",
                "        x = get(value)",
                "    def __init__(self):",
                "    def getValue_x__y(self):",
                "    async def HTTPServer_Base(self):",
                "    def \u0391\u03a3_value(self):",
            ]
        ),
        max_size=80,
    ),
    words=st.lists(st.sampled_from(WORDS)),
)
def test_best_part_counts_as_copies_of_its_lines_would(body: list[str], words: list[str]) -> None:
    text = "\n".join(["class Holder:", '    """Holds a value."""', *body])
    end = 5 + text.count("\n")
    got = best_part("Holder", text, "class", 5, end, True, [w.lower() for w in words])
    assert got == _best_part_by_copies("Holder", text, "class", 5, end, [w.lower() for w in words])


def _lines_by_walking(text: str, kind: str) -> list[tuple[str, str, int, int]]:
    """``definitions`` as first written: each line walked, a stack of open blocks
    (the oracle of the regular-expression form)."""
    lines = text.split("\n")
    found = definitions._named(text, kind)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    headers: dict[int, int] = {}
    placed = []
    for name, def_kind, offset, indent in found:
        number = max(i for i, at in enumerate(starts) if at <= offset)
        headers.setdefault(number, indent)
        placed.append((name, def_kind, number))
    ends: dict[int, int] = {}
    open_blocks: list[tuple[int, int]] = []
    last = -1
    for number, line in enumerate(lines):
        code = line.lstrip(" \t")
        if not code or code[0] == "#":
            continue
        if code[0] not in ")]}":
            while open_blocks and len(line) - len(code) <= open_blocks[-1][0]:
                ends[open_blocks.pop()[1]] = last
        if number in headers:
            open_blocks.append((headers[number], number))
        last = number
    for _, header in open_blocks:
        ends[header] = last
    result = []
    for name, def_kind, number in placed:
        first = number
        while def_kind != "variable" and first > 0 and lines[first - 1].strip().startswith("@"):
            first -= 1
        result.append((name, def_kind, first, max(ends.get(number, number), number)))
    return result


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "def top(a,",
                "        b):",
                "):",
                "    def method(self):",
                "\tdef tabbed(self):",
                "        return 1",
                "    @decorated",
                "    async def later(self):",
                "class Outer:",
                "    class Inner:",
                "  # a comment",
                "# a comment",
                "",
                "   ",
                "    ]",
                "VALUE = [",
                "Alias: type = Outer",
                "x == 1",
                "\fdef after_form_feed():",
                "    pass\r",
            ]
        ),
        max_size=60,
    ),
    kind=st.sampled_from(["module", "class", "function"]),
)
def test_definitions_end_where_walking_the_lines_ends_them(lines: list[str], kind: str) -> None:
    text = "\n".join(lines)
    assert definitions.definitions(text, kind) == _lines_by_walking(text, kind)


_HEADER_REGEX = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)
"""The headers ``_named`` finds, as a regular expression (the oracle of its ``str.find`` form)."""


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            [
                "def",
                "class",
                "async",
                " ",
                "\t",
                "\n",
                "f",
                "_x",
                "é",
                "(",
                ":",
                "#",
                "xdef",
                "def_",
            ]
        ),
        max_size=40,
    ).map("".join)
)
def test_the_headers_found_are_those_a_line_start_regex_finds(text: str) -> None:
    expected = [
        (m[3], "class" if m[2] == "class" else "function", m.start(), len(m[1]))
        for m in _HEADER_REGEX.finditer(text)
    ]
    assert definitions._named(text, "function") == expected


_ASSIGNMENT_REGEX = re.compile(r"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
"""A module chunk's top-level assignments, as a line-start regular expression (the
oracle of the form that searches for a newline first)."""


@settings(max_examples=400, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            ["def f", "class C", "x", "__all__", "_y2", " ", "\t", "\n", ":", "=", "==", "é", "# "]
        ),
        max_size=40,
    ).map("".join)
)
def test_a_module_chunks_assignments_are_those_a_line_start_regex_finds(text: str) -> None:
    headers = [
        (m[3], "class" if m[2] == "class" else "function", m.start(), len(m[1]))
        for m in _HEADER_REGEX.finditer(text)
    ]
    assigned = [
        (m[1], "variable", m.start(), 0)
        for m in _ASSIGNMENT_REGEX.finditer(text)
        if not (m[1].startswith("__") and m[1].endswith("__"))
    ]
    expected = sorted(headers + assigned, key=lambda entry: entry[2])
    assert definitions._named(text, "module") == expected


def test_a_long_chunk_without_definitions_is_cut_in_windows() -> None:
    text = "\n".join(["print(1)"] * 100 + ["print(needle)"] + ["print(2)"] * 40)
    start, end, part = best_part("<module>", text, "module", 10, 150, True, ["needle"])
    assert part is None and end - start + 1 <= definitions.WINDOW and start <= 110 <= end


@pytest.mark.parametrize(
    ("query", "names", "wholes"),
    [
        ("BaseModel", ("basemodel", "base", "model"), ("basemodel",)),
        ("base model", ("base", "model"), ("basemodel", "base_model")),
        ("how does ClientSession close", ("clientsession",), ()),
        (
            "model_post_init hook",
            ("model_post_init", "model", "post", "init", "hook"),
            ("model_post_inithook", "model_post_init_hook"),
        ),
        ("how are routes registered in the app", (), ()),
    ],
)
def test_the_words_that_name_code(
    query: str, names: tuple[str, ...], wholes: tuple[str, ...]
) -> None:
    parsed = hybrid.hybrid_query(query)
    assert parsed.names == names
    assert parsed.wholes == wholes


def test_a_name_is_found_by_its_beginning_as_one_types(tmp_path: Path) -> None:
    decoys = "".join(f"def base_helper{i}(mod):\n    return mod.base{i}\n\n" for i in range(40))
    write_tree(tmp_path, {"main.py": "class BaseModel:\n    x = 1\n", "helpers.py": decoys})
    index = build_index([tmp_path])
    for typed in ("BaseMod", "basemode"):
        hits = index.queries.search(typed, 5, "hybrid")
        assert hits[0].item.chunk.chunk_id == "main.py#class-BaseModel", typed


@pytest.mark.parametrize(
    ("prefix", "limit", "expected"),
    [
        ("\x01base", 10, ["\x01base", "\x01basemodel", "\x01basemodelx", "\x01baseq"]),
        ("\x01basem", 10, ["\x01basemodel", "\x01basemodelx"]),
        ("\x01base", 2, ["\x01base", "\x01basemodel"]),
        ("\x01basemodelxy", 10, []),
        ("\x02", 10, ["\x02get"]),
    ],
)
def test_the_terms_a_prefix_begins(prefix: str, limit: int, expected: list[str]) -> None:
    from chunkls.search.vocabulary import Vocabulary

    vocabulary = Vocabulary()
    vocabulary.ids(["\x01basemodel", "model", "\x01base", "\x02get", "\x01baseq"])
    vocabulary.freeze()
    vocabulary.ids(["\x01basemodelx", "\x01bas"])  # added since: not in the table yet
    assert vocabulary.starting(prefix, limit) == expected
