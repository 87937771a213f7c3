"""The tutorial's chunkers: IDs, text, symbols, order and the quirks it keeps."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from chunkls.chunking.chunker import (
    ChunkingError,
    chunk_markdown_source,
    chunk_python_source,
    chunk_source,
    decode_source,
    normalize_newlines,
)
from chunkls.chunking.ingest import chunk_file, chunk_markdown, chunk_python
from chunkls.chunking.suffixes import file_type_for
from chunkls.chunking.tutorial_chunk import Chunk


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


def rows(chunks: list[Chunk]) -> list[tuple[str, str | None]]:
    return [(chunk.chunk_id.partition("#")[2], chunk.symbol) for chunk in chunks]


# -- the Chunk record ------------------------------------------------------------


def test_chunk_is_the_tutorials_frozen_dataclass() -> None:
    fields = [(f.name, f.type, f.default) for f in dataclasses.fields(Chunk)]
    assert fields == [
        ("chunk_id", "str", dataclasses.MISSING),
        ("text", "str", dataclasses.MISSING),
        ("source_path", "str", dataclasses.MISSING),
        ("file_type", "str", dataclasses.MISSING),
        ("symbol", "str | None", None),
    ]
    chunk = Chunk("a.py#module-1", "x = 1", "a.py", "code")
    assert chunk.symbol is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.text = "y"  # type: ignore[misc]
    assert chunk == Chunk("a.py#module-1", "x = 1", "a.py", "code", None)
    assert hash(chunk) == hash(Chunk("a.py#module-1", "x = 1", "a.py", "code", None))


# -- the tutorial's own four tests --------------------------------------------------


def test_chunk_python_preserves_module_code_decorators_and_definitions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "sample.py",
        'import os\n\n\n@decorator\ndef greet(name):\n    return f"hi {name}"\n\n\n'
        "class Greeter:\n    def hello(self):\n        return greet('x')\n",
    )
    chunks = chunk_python(path, root=tmp_path)
    assert [chunk.chunk_id for chunk in chunks] == [
        "sample.py#module-1",
        "sample.py#function-greet",
        "sample.py#class-Greeter",
    ]
    assert chunks[0] == Chunk("sample.py#module-1", "import os", "sample.py", "code", "<module>")
    assert chunks[1].text.startswith("@decorator\ndef greet(name):")
    assert chunks[1].symbol == "greet"
    assert chunks[2].symbol == "Greeter"
    assert "def hello(self):" in chunks[2].text
    assert {chunk.file_type for chunk in chunks} == {"code"}


def test_chunk_markdown_uses_headings_and_disambiguates_duplicates(tmp_path: Path) -> None:
    path = write(tmp_path, "guide.md", "Intro.\n\n# Setup\nFirst.\n\n# Setup\nSecond.\n")
    chunks = chunk_markdown(path, root=tmp_path)
    assert [chunk.chunk_id for chunk in chunks] == [
        "guide.md#heading-preamble",
        "guide.md#heading-setup",
        "guide.md#heading-setup-2",
    ]
    assert chunks[0].symbol == "preamble"
    assert chunks[2] == Chunk(
        "guide.md#heading-setup-2", "# Setup\nSecond.", "guide.md", "prose", "Setup"
    )


def test_chunk_file_rejects_unsupported_suffix(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.txt", "hello\n")
    with pytest.raises(ValueError, match="Unsupported file type"):
        chunk_file(path, root=tmp_path)


@pytest.mark.parametrize(
    ("name", "message"),
    [("notes.txt", "Unsupported file type: .txt"), ("Makefile", "Unsupported file type: <none>")],
)
def test_chunk_file_error_message_names_the_suffix(tmp_path: Path, name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        chunk_file(write(tmp_path, name, "x\n"), root=tmp_path)


def test_chunk_file_dispatches_case_insensitively(tmp_path: Path) -> None:
    assert rows(chunk_file(write(tmp_path, "X.PY", "def f():\n    pass\n"), tmp_path)) == [
        ("function-f", "f")
    ]
    for name in ("a.MD", "b.Markdown", "c.markdown"):
        assert rows(chunk_file(write(tmp_path, name, "# H\n"), tmp_path)) == [("heading-h", "H")]


def test_source_path_is_root_relative_posix_or_absolute_without_root(tmp_path: Path) -> None:
    path = write(tmp_path, "pkg/sub/mod.py", "X = 1\n")
    assert chunk_python(path, root=tmp_path)[0].chunk_id == "pkg/sub/mod.py#module-1"
    assert chunk_python(path)[0].source_path == path.resolve().as_posix()
    # a root that does not contain the file: the absolute path, as in the tutorial
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert chunk_python(path, root=other)[0].source_path == path.resolve().as_posix()


# -- Python -------------------------------------------------------------------------

PYTHON_CASES = [
    pytest.param("", [], id="empty"),
    pytest.param("\n \n\t\n", [], id="whitespace-only"),
    pytest.param("X = 1\nY = 2\n", [("module-1", "<module>")], id="constants-only"),
    pytest.param("# just a comment\n", [("module-1", "<module>")], id="comment-only"),
    pytest.param(
        "def a():\n    pass\ndef b():\n    pass\n",
        [("function-a", "a"), ("function-b", "b")],
        id="functions-no-module-code",
    ),
    pytest.param(
        "import os\n\ndef a():\n    pass\n\nX = 1\n\nclass B:\n    pass\n\nY = 2\n",
        [
            ("module-1", "<module>"),
            ("function-a", "a"),
            ("module-5", "<module>"),
            ("class-B", "B"),
            ("module-10", "<module>"),
        ],
        id="module-code-between-definitions",
    ),
    pytest.param(
        "async def fetch():\n    await x\n",
        [("function-fetch", "fetch")],
        id="async-def-is-a-function",
    ),
    pytest.param(
        "@a\n@b(\n  1,\n)\nclass C:\n    pass\n",
        [("class-C", "C")],
        id="multi-line-decorators-belong-to-the-class",
    ),
    pytest.param(
        "class C:\n    def m(self):\n        pass\n    async def n(self):\n        pass\n",
        [("class-C", "C")],
        id="methods-stay-inside-the-class",
    ),
    pytest.param(
        "def outer():\n    def inner():\n        pass\n    return inner\n",
        [("function-outer", "outer")],
        id="nested-defs-stay-inside",
    ),
    pytest.param(
        "from typing import overload\n\n@overload\ndef f(x: int) -> int: ...\n"
        "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n",
        [("module-1", "<module>"), ("function-f", "f"), ("function-f", "f"), ("function-f", "f")],
        id="overload-stubs-share-one-id",
    ),
    pytest.param(
        "if X:\n    def f():\n        pass\n",
        [("module-1", "<module>")],
        id="conditional-def-is-module-code",
    ),
    pytest.param(
        'X = """\ndef not_real():\n    pass\n"""\n',
        [("module-1", "<module>")],
        id="def-inside-a-string-is-not-a-definition",
    ),
    pytest.param(
        "def f():\n    pass\n\n\n\n# trailing comment\n",
        [("function-f", "f"), ("module-3", "<module>")],
        id="module-id-counts-from-the-line-after-the-definition",
    ),
]


@pytest.mark.parametrize(("source", "expected"), PYTHON_CASES)
def test_python_identities(tmp_path: Path, source: str, expected: list[tuple[str, str]]) -> None:
    chunks = chunk_python(write(tmp_path, "m.py", source), root=tmp_path)
    assert rows(chunks) == expected
    for chunk in chunks:
        assert chunk.chunk_id == f"m.py#{chunk.chunk_id.partition('#')[2]}"
        assert chunk.source_path == "m.py"
        assert chunk.file_type == "code"
        assert chunk.text == chunk.text.strip()
        assert chunk.text


def test_python_text_is_the_stripped_definition_with_its_decorators(tmp_path: Path) -> None:
    source = "X = 1\n\n\n@dec\ndef f():\n    return 1\n\n\nY = 2\n"
    chunks = chunk_python(write(tmp_path, "m.py", source), root=tmp_path)
    assert [chunk.text for chunk in chunks] == ["X = 1", "@dec\ndef f():\n    return 1", "Y = 2"]


def test_overload_chunks_keep_each_stubs_text(tmp_path: Path) -> None:
    source = "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\n"
    chunks = chunk_python(write(tmp_path, "m.py", source), root=tmp_path)
    assert [chunk.text for chunk in chunks] == [
        "@overload\ndef f(x: int) -> int: ...",
        "@overload\ndef f(x: str) -> str: ...",
    ]


def test_form_feed_shifts_python_text_like_the_tutorial(tmp_path: Path) -> None:
    """The AST does not count a form feed as a line break; splitlines() does.

    So after a form feed, the tutorial's slices are off by one line: this is the
    tutorial's output, kept on purpose."""
    source = "def a():\n    return 1\n\f\ndef b():\n    return 2\n"
    chunks = chunk_python(write(tmp_path, "m.py", source), root=tmp_path)
    # splitlines() sees "\f" and "\n" as two breaks: AST lines 4-5 (def b) are
    # splitlines() lines 5-6, so the slice 4-5 cuts def b in two and its last line
    # becomes module code.
    assert rows(chunks) == [("function-a", "a"), ("function-b", "b"), ("module-6", "<module>")]
    assert [chunk.text for chunk in chunks[1:]] == ["def b():", "return 2"]


def test_bom_crlf_and_cr_are_read_as_text_mode_does(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"import os\r\n\r\ndef f():\r\n    return 1\r\n")
    assert [c.text for c in chunk_python(path, tmp_path)] == ["import os", "def f():\n    return 1"]
    path.write_bytes(b"import os\r\rdef f():\r    return 1\r")
    assert [c.text for c in chunk_python(path, tmp_path)] == ["import os", "def f():\n    return 1"]


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def f(:\n    pass\n", "SyntaxError line 1: "),
        ("x = 1\ny = (\n", "SyntaxError line 2: "),
        ("def f():\nreturn 1\n", "IndentationError line 2: expected an indented block"),
        ("if x:\n\tif y:\n        z = 1\n\tw = 2\n", "TabError line 3: inconsistent use of tabs"),
        ("\ufeffX = 1\n", "byte-order mark"),
        ("X = 1\0\n", "NUL bytes"),
        ("X = 1\v\n", "SyntaxError line 1: invalid non-printable character U+000B"),
        ("x = " + "-" * 200_000 + "1\n", "nesting too deep"),
        ("x = " + "(" * 300 + ")" * 300 + "\n", "SyntaxError"),
    ],
)
def test_python_that_does_not_parse_raises_a_one_line_reason(source: str, reason: str) -> None:
    with pytest.raises(ChunkingError) as caught:
        chunk_python_source(source, "m.py")
    assert reason in caught.value.reason
    assert "\n" not in caught.value.reason
    assert isinstance(caught.value, ValueError)  # the tutorial's chunk_file raises ValueErrors


# -- Markdown -----------------------------------------------------------------------

MARKDOWN_CASES = [
    pytest.param("", [], id="empty"),
    pytest.param("\n  \n", [], id="blank"),
    pytest.param("Just text.\n", [("heading-preamble", "preamble")], id="preamble-only"),
    pytest.param("# Title\n", [("heading-title", "Title")], id="heading-only"),
    pytest.param(
        "Intro\n# Getting Started\nx\n## API: `chunk_id`\ny\n",
        [
            ("heading-preamble", "preamble"),
            ("heading-getting-started", "Getting Started"),
            ("heading-api-chunk-id", "API: `chunk_id`"),
        ],
        id="slugs",
    ),
    pytest.param(
        "# Setup\na\n# Setup\nb\n# Setup\nc\n",
        [("heading-setup", "Setup"), ("heading-setup-2", "Setup"), ("heading-setup-3", "Setup")],
        id="repeated-headings",
    ),
    pytest.param(
        "# Setup\na\n# Setup 2\nb\n# Setup\nc\n",
        [("heading-setup", "Setup"), ("heading-setup-2", "Setup 2"), ("heading-setup-2", "Setup")],
        id="two-headings-collide-on-one-id",
    ),
    pytest.param(
        "# 日本語\na\n# ---\nb\n",
        [("heading-section", "日本語"), ("heading-section-2", "---")],
        id="empty-slug-is-section",
    ),
    pytest.param(
        "# Usage\n```bash\n# install\npip install x\n```\n",
        [("heading-usage", "Usage"), ("heading-install", "install")],
        id="hash-line-in-a-fence-starts-a-section",
    ),
    pytest.param(
        "####### seven\n#NoSpace\n#\n",
        [("heading-preamble", "preamble")],
        id="not-headings",
    ),
    pytest.param(
        "###### Six\n",
        [("heading-six", "Six")],
        id="six-hashes-is-a-heading",
    ),
    pytest.param(
        "## Closed ##\nx\n# Trailing hashes ###   \ny\n",
        [("heading-closed", "Closed"), ("heading-trailing-hashes", "Trailing hashes")],
        id="closing-hashes-are-dropped",
    ),
    pytest.param(
        "# A\n\n# B\n\n# A\ntext\n",
        [("heading-a", "A"), ("heading-b", "B"), ("heading-a-2", "A")],
        id="heading-only-sections-count",
    ),
    pytest.param(
        "   # indented\n#\tTab\n",
        [("heading-preamble", "preamble"), ("heading-tab", "Tab")],
        id="indented-is-not-a-heading-tab-separator-is",
    ),
    pytest.param(
        "# C# and C++\n",
        [("heading-c-and-c", "C# and C++")],
        id="hash-inside-a-heading",
    ),
]


@pytest.mark.parametrize(("source", "expected"), MARKDOWN_CASES)
def test_markdown_identities(tmp_path: Path, source: str, expected: list[tuple[str, str]]) -> None:
    chunks = chunk_markdown(write(tmp_path, "g.md", source), root=tmp_path)
    assert rows(chunks) == expected
    for chunk in chunks:
        assert chunk.source_path == "g.md"
        assert chunk.file_type == "prose"
        assert chunk.text and chunk.text == chunk.text.strip()


def test_markdown_section_text_runs_to_the_next_heading(tmp_path: Path) -> None:
    source = "Intro\n\n# One\nbody 1\n\n## Two\nbody 2\n\n"
    chunks = chunk_markdown(write(tmp_path, "g.md", source), root=tmp_path)
    assert [chunk.text for chunk in chunks] == ["Intro", "# One\nbody 1", "## Two\nbody 2"]


def test_markdown_keeps_a_bom_in_the_preamble() -> None:
    [chunk] = chunk_markdown_source("\ufeff# Title\nx\n", "g.md")
    assert (chunk.chunk_id, chunk.text) == ("g.md#heading-preamble", "\ufeff# Title\nx")


# -- helpers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.py", "code"),
        ("A.PY", "code"),
        ("a.md", "prose"),
        ("a.Markdown", "prose"),
        ("a.txt", None),
        (".py", None),
        (".md", None),
        ("a.py.", None),
        ("a.py.txt", None),
        ("..py", "code"),
        ("a.tar.md", "prose"),
        ("Makefile", None),
    ],
)
def test_file_type_for_follows_pathlib_suffix(name: str, expected: str | None) -> None:
    assert file_type_for(name) == expected
    suffix = Path(name).suffix.lower()
    tutorial = "code" if suffix == ".py" else "prose" if suffix in {".md", ".markdown"} else None
    assert tutorial == expected


def test_chunk_source_dispatches_and_rejects() -> None:
    assert [c.chunk_id for c in chunk_source("def f(): pass\n", "x/m.py", "m.py")] == [
        "x/m.py#function-f"
    ]
    assert [c.chunk_id for c in chunk_source("# H\n", "x/g.md", "g.md")] == ["x/g.md#heading-h"]
    with pytest.raises(ChunkingError, match=r"Unsupported file type: \.txt"):
        chunk_source("x", "n.txt", "n.txt")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\r\nb", "a\nb"),
        ("a\rb", "a\nb"),
        ("a\r\r\nb", "a\n\nb"),
        ("a\n\rb", "a\n\nb"),
        ("a\x85b\fc", "a\x85b\fc"),
        ("", ""),
    ],
)
def test_normalize_newlines_is_text_mode_reading(tmp_path: Path, text: str, expected: str) -> None:
    assert normalize_newlines(text) == expected
    path = tmp_path / "f"
    path.write_bytes(text.encode())
    assert path.read_text(encoding="utf-8") == expected


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"caf\xe9\n", "not valid UTF-8 (byte 0xe9 at offset 3)"),
        (b"\xed\xa0\x80", "not valid UTF-8"),  # an encoded surrogate
        (b"\xff", "not valid UTF-8 (byte 0xff at offset 0)"),
    ],
)
def test_decode_source_rejects_what_read_text_rejects(data: bytes, reason: str) -> None:
    with pytest.raises(ChunkingError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        decode_source(data)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")


def test_decode_source_keeps_bom_and_nul_and_normalises_newlines() -> None:
    assert decode_source(b"\xef\xbb\xbfa\r\nb\0") == "\ufeffa\nb\0"


def test_chunk_source_parses_a_text_once_and_never_serves_a_stale_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import chunkls.chunking.chunker as chunker

    parses: list[str] = []
    real = chunker.parse_python

    def counting(source: str, filename: str = "<unknown>") -> Any:
        parses.append(source)
        return real(source, filename)

    monkeypatch.setattr(chunker, "parse_python", counting)
    monkeypatch.setattr(chunker, "_recent", {})
    monkeypatch.setattr(chunker, "_parsed", {})
    first = "def a():\n    return 1\n"
    chunks = chunker.chunk_source(first, "m.py", "m.py")
    chunks.append(chunks[0])  # the caller's list is its own
    again = chunker.chunk_source("".join(first), "m.py", "m.py")
    assert [c.chunk_id for c in again] == ["m.py#function-a"]
    assert len(parses) == 1
    # same text, another path: chunked for that path
    assert [c.chunk_id for c in chunker.chunk_source(first, "n.py", "n.py")] == ["n.py#function-a"]
    changed = chunker.chunk_source("def b():\n    return 2\n", "m.py", "m.py")
    assert [c.chunk_id for c in changed] == ["m.py#function-b"]
    assert len(parses) == 2  # m.py's new text: only the edited statement is re-parsed
    for _ in range(2):
        with pytest.raises(ChunkingError, match="SyntaxError"):
            chunker.chunk_source("def (:\n", "m.py", "m.py")
    assert len(parses) == 3  # the full parse that reports the error, once
    for i in range(chunker.RECENT_TEXTS + 2):
        chunker.chunk_source(f"x = {i}\n", f"f{i}.py", f"f{i}.py")
    assert len(chunker._recent) == chunker.RECENT_TEXTS
