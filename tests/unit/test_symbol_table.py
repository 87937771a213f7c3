"""The symbol table vouches that a text parses, and the scan checked against it
gives exactly what a full parse gives, or declines (then the file is parsed)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkls.chunking import symbol_table as symbols
from chunkls.chunking.corpus import CorpusRules, walk_corpus
from chunkls.chunking.outline import Outline
from chunkls.index.workers import chunk_many, chunk_one

from .test_bytecode import module_tree
from .test_outline import full
from .test_scan import LINES, edit, scan_gone_wrong, sources
from .test_scan import agrees as scan_agrees

pytestmark = pytest.mark.skipif(not symbols.ENABLED, reason="the scan models Python 3.11 only")


def outline(source: str) -> Outline | None:
    return symbols.outline(source, source.encode("utf-8"), "<test>")


def agrees(source: str) -> bool:
    """The symbol table's outline equals the full parse, or declines; whether it answered."""
    return scan_agrees(source, outline)


@pytest.mark.parametrize(
    "source",
    [
        "",
        "x = 1\n",
        "def f(): pass\n",
        "@a\n# c\n\n@b.c(\n  1)\nclass C(\n  B):\n    pass\n",
        "async def f():\n    await g()\nclass C: pass\n",
        "x = '''\ndef fake(): pass\n'''\ndef real(): pass\n",
        "if x:\n    def nested(): pass\nelse:\n    class Nested: pass\ndef top(): pass\n",
        "def f(a=lambda: 1, b=lambda: 2): pass\n",  # lambdas on the def line
        "@d(lambda f: f)\ndef f(): pass\n",  # a lambda on a decorator line
        "x = 1\nfrom __future__ import annotations\n",  # the compiler's error, not the table's
        "class C: x = [i for i in range(3)]\n",  # the comprehension is the class's
        "f = lambda: 0\ndef g(): return [x for x in y]\n",
        "def return_(): return 1\nreturn_ = 2\n",
        "return 1\n",  # the compiler refuses it; the parser and the table do not
        "def f():\n    nonlocal_ = 1\n",
    ],
)
def test_texts_the_table_vouches_for(source: str) -> None:
    assert agrees(source)


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("def f(:\n", "a syntax error"),
        ("nonlocal x\n", "an error only the symbol table finds: ast.parse accepts it"),
        ("def f():\n    x = 1\n    global x\n", "a name used before its global declaration"),
        ("def f(a=[i for i in x]): pass\n", "a comprehension on a def line"),
        ("\ufeffdef f(): pass\n", "a byte-order mark (the scan declines)"),
        ("def f(): pass\0\n", "a NUL byte (the scan declines)"),
        ("x = a" + ".b" * 3_000 + "\ndef f(): pass\n", "nesting ast.parse refuses"),
    ],
)
def test_texts_left_to_the_parser(source: str, why: str) -> None:
    assert outline(source) is None, why


def test_errors_only_the_table_finds_are_still_chunked_as_the_parser_does() -> None:
    source = "def f(): pass\nnonlocal x\n"
    assert outline(source) is None
    assert full(source) is not None  # ast.parse accepts it: the file is parsed, not skipped


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=16))
def test_any_text_of_tricky_lines_agrees(lines: list[str]) -> None:
    agrees("\n".join(lines))


@pytest.mark.parametrize("path", sources()[::4], ids=lambda p: p.name)
def test_real_files_and_random_edits_of_them_agree(path: Path) -> None:
    text = path.read_text()
    assert agrees(text), "a file of this repository should be outlined"
    rng = random.Random(path.name)
    for _ in range(20):  # a session of edits, each on the last one
        text = edit(rng, text)
        agrees(text)


@pytest.mark.parametrize("wrong", ["missing_one", "misnamed", "keyword_moved"])
def test_the_table_catches_a_scan_gone_wrong(wrong: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = "def f(): pass\nclass C: pass\nx = [i for i in y]\n"
    assert outline(source) is not None
    scan_gone_wrong(monkeypatch, wrong)
    assert outline(source) is None


def test_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert outline("def f(): pass\n") is not None
    monkeypatch.setattr(symbols, "ENABLED", False)
    assert outline("def f(): pass\n") is None


def test_workers_outlining_by_the_table_chunk_as_the_parser_does(tmp_path: Path) -> None:
    """No bytecode anywhere (a fresh clone): workers outline by the symbol table."""
    module_tree(tmp_path)  # modules, a table, and broken.py
    (tmp_path / "nonlocal.py").write_text("def f(): pass\n\nnonlocal x\n")
    (tmp_path / "deep.py").write_text("x = a" + ".b" * 3_500 + "\n\ndef f(): pass\n")
    rules = CorpusRules()
    files = walk_corpus(tmp_path, rules).files
    used: list[str] = []
    real = symbols.outline

    def counting(text: str, data: bytes, filename: str) -> Outline | None:
        found = real(text, data, filename)
        if found is not None:
            used.append(filename)
        return found

    resolved = tmp_path.resolve()
    serial = {f.rel_path: chunk_one(resolved, f, rules) for f in files}  # ast.parse only
    symbols.outline = counting  # type: ignore[assignment]
    try:
        vouched = {f.rel_path: chunk_one(resolved, f, rules, skip_ast=True) for f in files}
    finally:
        symbols.outline = real  # type: ignore[assignment]
    assert vouched == serial
    assert "mod5.py" in used
    assert not {"broken.py", "nonlocal.py", "deep.py"} & set(used)
    assert serial["broken.py"].skipped and serial["deep.py"].skipped
    assert serial["nonlocal.py"].chunks is not None  # ast.parse accepts it: chunked
    parallel = {r.rel_path: r for r in chunk_many(resolved, files, rules, 2) if r is not None}
    assert parallel == serial
