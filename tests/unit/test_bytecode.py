"""A cached bytecode file vouches that a text parses only when it is this
interpreter's, matches the text as the import system checks it, and the scan
agrees with it; the chunks are then exactly the parser's."""

from __future__ import annotations

import compileall
import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from chunkls.chunking import bytecode, scan
from chunkls.chunking.corpus import CorpusRules, walk_corpus
from chunkls.chunking.outline import outline_of, parse_module
from chunkls.index.workers import SERIAL_BELOW, chunk_many, chunk_one

pytestmark = pytest.mark.skipif(not bytecode.ENABLED, reason="the scan models Python 3.11 only")

SOURCE = '''"""A module."""

import os


@decorate
def first(x):
    return x  # a comment


class Second:
    def method(self):
        return """
def not_a_function(): pass
"""


async def third():
    await first(1)
'''

Mode = py_compile.PycInvalidationMode


def _compiled(tmp_path: Path, text: str = SOURCE, mode: Mode = Mode.TIMESTAMP) -> Path:
    path = tmp_path / "module.py"
    path.write_text(text)
    py_compile.compile(str(path), doraise=True, invalidation_mode=mode)
    return path


def _outline(path: Path) -> object:
    data = path.read_bytes()
    info = os.stat(path)
    return bytecode.outline(str(path), data, info.st_mtime_ns, info.st_size)


def _defs(text: str) -> object:
    return tuple(s for s in outline_of(parse_module(text)) if s.kind is not None)


@pytest.mark.parametrize("mode", [Mode.TIMESTAMP, Mode.CHECKED_HASH, Mode.UNCHECKED_HASH])
def test_a_matching_bytecode_file_gives_the_parsers_outline(tmp_path: Path, mode: Mode) -> None:
    path = _compiled(tmp_path, mode=mode)
    assert _outline(path) == _defs(SOURCE)
    assert [s.name for s in _defs(SOURCE)] == ["first", "Second", "third"]  # type: ignore[attr-defined]


def test_no_bytecode_file_no_outline(tmp_path: Path) -> None:
    path = tmp_path / "module.py"
    path.write_text(SOURCE)
    assert _outline(path) is None


def test_a_text_changed_since_it_was_compiled_is_not_vouched_for(tmp_path: Path) -> None:
    path = _compiled(tmp_path)
    info = os.stat(path)
    path.write_text(SOURCE + "def added(:\n")  # no longer parses; another size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert _outline(path) is None
    path.write_text(SOURCE)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))  # another second
    assert _outline(path) is None


def test_bytes_read_while_the_file_changed_are_not_vouched_for(tmp_path: Path) -> None:
    path = _compiled(tmp_path)
    info = os.stat(path)
    data = path.read_bytes()
    assert bytecode.outline(str(path), data, info.st_mtime_ns, info.st_size) is not None
    grown = data + b"def more(:\n"  # the stat is the compiled file's, the bytes are not
    assert bytecode.outline(str(path), grown, info.st_mtime_ns, info.st_size) is None


def test_a_hash_based_file_is_checked_here_even_when_unchecked(tmp_path: Path) -> None:
    path = _compiled(tmp_path, mode=Mode.UNCHECKED_HASH)
    broken = SOURCE.replace("def first(x):", "def first(x)!")  # the same size
    assert len(broken) == len(SOURCE)
    path.write_text(broken)
    assert _outline(path) is None


def _cached(path: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(path)))


@pytest.mark.parametrize(
    "damage",
    [
        lambda blob: b"\0\0\0\0" + blob[4:],  # another interpreter's magic number
        lambda blob: blob[:4] + (4).to_bytes(4, "little") + blob[8:],  # unknown flags
        lambda blob: blob[:12],  # a header cut short
        lambda blob: blob[:16],  # no code
        lambda blob: blob[:16] + b"garbage",  # not marshal data
        lambda blob: blob[:16] + b"\xe9\x00\x00\x00\x00",  # marshal data that is not code
        lambda blob: blob[: len(blob) // 2],  # truncated code
    ],
    ids=["magic", "flags", "short-header", "empty", "garbage", "not-code", "truncated"],
)
def test_a_damaged_bytecode_file_is_ignored(tmp_path: Path, damage: object) -> None:
    path = _compiled(tmp_path)
    cached = _cached(path)
    cached.write_bytes(damage(cached.read_bytes()))  # type: ignore[operator]
    assert _outline(path) is None


def test_a_bytecode_path_that_is_not_a_regular_file_is_not_read(tmp_path: Path) -> None:
    path = _compiled(tmp_path)
    cached = _cached(path)
    cached.unlink()
    os.mkfifo(cached)  # never opened for a blocking read
    assert _outline(path) is None
    cached.unlink()
    cached.mkdir()
    assert _outline(path) is None


@pytest.mark.parametrize(
    ("head", "vouched"),
    [
        ("# -*- coding: latin-1 -*-\n", False),  # the compiler decoded other text
        ("#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n", False),
        ("# coding=no-such-codec\n", False),
        ("# -*- coding: utf-8 -*-\n", True),
        ("# coding: UTF8\n", True),
        ("", True),
    ],
)
def test_an_encoding_other_than_utf8_is_left_to_the_parser(
    tmp_path: Path, head: str, vouched: bool
) -> None:
    body = 'x = "\u00e9"\n\ndef f(): pass\n'
    data = (head + body).encode("utf-8")
    # a module of the same shape, compiled without the declaration
    code = compile("\n" * head.count("\n") + body, "<test>", "exec")
    assert (bytecode.outline_by_code(data, code) is not None) == vouched
    ascii_text = (head + "x = 1\n\ndef f(): pass\n").encode("ascii")  # decodes the same
    assert bytecode.outline_by_code(ascii_text, code) is not None


def test_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _compiled(tmp_path)
    assert _outline(path) is not None
    monkeypatch.setattr(bytecode, "ENABLED", False)
    assert _outline(path) is None


def module_tree(root: Path) -> Path:
    """Enough small modules for workers, a long table, and a file that does not parse."""
    for i in range(SERIAL_BELOW + 10):
        body = "\n\n".join(f"@d{j}\ndef f{i}_{j}(x):\n    return x + {j}\n" for j in range(i % 7))
        (root / f"mod{i}.py").write_text(f'"""Module {i}."""\nimport os\n\n{body}\n# end\n')
    (root / "broken.py").write_text("def broken(:\n")
    (root / "table.py").write_text(
        "T = {\n" + "".join(f"    {i}: ({i}, 'v'),\n" for i in range(2_000)) + "}\n"
    )
    return root


def test_workers_using_bytecode_chunk_as_the_parser_does(tmp_path: Path) -> None:
    root = module_tree(tmp_path)
    assert compileall.compile_dir(str(root), quiet=2) is False  # broken.py does not compile
    stale = root / "mod3.py"
    stale.write_text(stale.read_text() + "\ndef late(): pass\n")  # its bytecode is stale now
    rules = CorpusRules()
    files = walk_corpus(root, rules).files
    used: list[str] = []
    real = bytecode.outline

    def counting(path: str, data: bytes, mtime_ns: int, size: int) -> object:
        found = real(path, data, mtime_ns, size)
        if found is not None:
            used.append(Path(path).name)
        return found

    resolved = root.resolve()
    serial = {f.rel_path: chunk_one(resolved, f, rules) for f in files}  # no bytecode
    bytecode.outline = counting  # type: ignore[assignment]
    try:
        vouched = {f.rel_path: chunk_one(resolved, f, rules, skip_ast=True) for f in files}
    finally:
        bytecode.outline = real  # type: ignore[assignment]
    assert vouched == serial
    assert "table.py" in used and "mod5.py" in used
    assert "mod3.py" not in used and "broken.py" not in used
    parallel = {r.rel_path: r for r in chunk_many(resolved, files, rules, 2) if r is not None}
    assert parallel == serial


def test_a_deep_text_the_compiler_accepted_is_still_parsed(tmp_path: Path) -> None:
    """``ast.parse`` gives up at 2,982 levels here (``outline.MAX_NESTING``); a
    compiler run with a higher recursion limit wrote bytecode for a deeper text."""
    deep = tmp_path / "deep.py"
    deep.write_text("x = a" + ".b" * 3_500 + "\n\ndef f(): pass\n")
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, py_compile; sys.setrecursionlimit(10_000);"
            f" py_compile.compile({str(deep)!r}, doraise=True)",
        ],
        check=True,
    )
    assert _cached(deep).exists()
    assert scan.statements(deep.read_bytes()) is None
    assert _outline(deep) is None
    rules = CorpusRules()
    (file,) = walk_corpus(tmp_path, rules).files
    result = chunk_one(tmp_path.resolve(), file, rules, skip_ast=True)
    assert result.skipped == "RecursionError: nesting too deep for ast.parse"
