"""Tutorial equivalence: ``scan_corpus`` and ``ingest_path`` against the oracle.

The oracle is the tutorial's own code (``tests/reference/tutorial_ingest.py``).
On any tree, chunkls must give exactly the tutorial's five fields in the same
order, minus the files the tutorial would crash on (which chunkls reports).
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from chunkls.chunking.ingest import chunk_file, ingest_path, scan_corpus
from chunkls.chunking.tutorial_chunk import Chunk
from tests.reference import tutorial_ingest as tutorial

from .strategies import Tree, markdown_source, python_source, trees, write_tree


def assert_same_as_tutorial(root: Path) -> list[Chunk]:
    """chunkls's chunks of ``root`` equal the tutorial's, and it skips exactly
    the files the tutorial crashes on."""
    scan = scan_corpus(root)
    ours = [dataclasses.astuple(chunk.to_chunk()) for chunk in scan.chunks()]
    expected_chunks, crashed = tutorial.ingest_path_tolerant(root)
    expected = [dataclasses.astuple(chunk) for chunk in expected_chunks]
    assert ours == expected
    assert sorted(skip.rel_path for skip in scan.skipped) == sorted(crashed)
    # the tutorial-shaped entry point gives the same list of Chunk records
    assert [dataclasses.astuple(chunk) for chunk in ingest_path(root)] == expected
    return [chunk.to_chunk() for chunk in scan.chunks()]


PY_TRICKY = {
    "decorators.py": (
        "import functools\n\n\n@functools.cache\n@other(\n    1,\n)\ndef cached(x):\n"
        "    return x\n\n\n@dataclass\nclass Point:\n    x: int\n"
    ),
    "overloads.py": (
        "from typing import overload\n\n@overload\ndef f(x: int) -> int: ...\n"
        "@overload\ndef f(x: str) -> str: ...\ndef f(x):\n    return x\n"
    ),
    "nested.py": (
        "def outer():\n    def inner():\n        pass\n    class Local:\n        pass\n"
        "    return inner\n\nclass C:\n    def method(self):\n        pass\n\n"
        "    class Inner:\n        def deep(self):\n            pass\n"
    ),
    "asyncdefs.py": "async def fetch():\n    await x\n\nasync def other(): pass\nX = 1\n",
    "formfeed.py": "def a():\n    return 1\n\f\ndef b():\n    return 2\n\f\nTAIL = 3\n",
    "formfeed_inline.py": "X = 1\n\fdef a():\n    pass\n\fY = 2\n",
    "crlf.py": "import os\r\n\r\n\r\ndef a():\r\n    return 1\r\n\r\nclass B:\r\n    pass\r\n",
    "lone_cr.py": "import os\r\rdef a():\r    return 1\r\rZ = 2\r",
    "mixed_ends.py": "A = 1\r\nB = 2\rdef f():\n    pass\r\nC = 3",
    "nel_string.py": 'S = "a\x85b"\ndef f():\n    return "c\u2028d"\nT = "e\u2029f"\n',
    "exotic_strings.py": 'A = "\x1c\x1d\x1e"\ndef f():\n    return "\v\f"\nB = 1\n',
    "trailing_ws.py": "def f():\n    pass\n   \n\t\n    \nX = 1\n   \n\n",
    "constants.py": "A = 1\nB = 2\n# comment\n",
    "empty.py": "",
    "whitespace.py": "   \n\n\t\n",
    "comment_only.py": "# only a comment\n",
    "docstring_only.py": '"""Just a docstring."""\n',
    "no_trailing_newline.py": "def f():\n    pass",
    "one_liners.py": "def a(): pass\ndef b(): pass\nclass C: pass\n",
    "multiline_string.py": 'X = """\ndef not_a_def():\n    pass\n"""\n\ndef real():\n    pass\n',
    "if_main.py": "def main():\n    pass\n\nif __name__ == '__main__':\n    main()\n",
    "same_name.py": "def f():\n    return 1\n\ndef f():\n    return 2\n\nclass f:\n    pass\n",
    "unicode_names.py": "def naïve():\n    pass\n\nclass Ünïcode:\n    pass\n",
    "continuation.py": (
        "X = [\n    1,\n    2,\n]\ndef f(\n    a,\n    b,\n):\n    return (a\n            + b)\n"
    ),
    "semicolons.py": "import os; import sys\ndef f(): return 1; \nY = 2\n",
}

MD_TRICKY = {
    "README.md": "Intro text.\n\n# Title\nBody.\n\n## Setup\nFirst.\n\n## Setup\nSecond.\n",
    "fenced.md": (
        "# Usage\n\n```bash\n# install it\npip install x\n```\n\n```python\n# comment\n```\n"
    ),
    "hashes.md": "####### seven\n#NoSpace\n# Real #\n### Trailing ###   \n#\n# \n##\n###### six\n",
    "unicode.md": "# 日本語\nA\n# Ünïcödé\nB\n# ---\nC\n# !!!\nD\n# Ça va\nE\n",
    "collide.md": "# Setup\na\n# Setup 2\nb\n# Setup\nc\n# setup-2\nd\n# SETUP!\ne\n",
    "empty.md": "",
    "blank.md": "\n\n   \n",
    "only_heading.md": "# Lonely\n",
    "empty_sections.md": "# A\n\n# B\n\n# A\ntext\n",
    "crlf.md": "pre\r\n# One\r\nbody\r\n\r\n## Two\r\nmore\r\n",
    "cr.md": "pre\r# One\rbody\r## Two\rmore\r",
    "exotic.md": "intro\f# Not at line start\x85# After NEL\nx\u2028# After LS\ny\n",
    "tabs.md": "#\tTabbed\nt\n#  Two spaces  \nu\n  # indented\nv\n",
    "notes.markdown": "# Markdown suffix\ntext\n",
    "trailing_ws.md": "# H\nline   \n\n   \n",
    "whitespace_heading.md": "#  \t \nnot a heading?\n# ###\nclosing only\n",
}

TREE_TRICKY: Tree = {
    **{f"src/{name}": text for name, text in PY_TRICKY.items()},
    **{f"doc/{name}": text for name, text in MD_TRICKY.items()},
    # names that sort oddly: '-' < '.' < '/' < '_' in the tutorial's string key
    "a-b/x.py": "A = 1\n",
    "a.py": "B = 1\n",
    "a/x.py": "C = 1\n",
    "a_b/x.py": "D = 1\n",
    "aB.py": "E = 1\n",
    "Z.py": "F = 1\n",
    # suffixes: case-insensitive, dotfiles have no suffix
    "UPPER.PY": "def shout():\n    pass\n",
    "Mixed.Md": "# Mixed case\ntext\n",
    "NOTES.MARKDOWN": "# Upper\n",
    ".py": "hidden = 1\n",
    ".md": "# hidden\n",
    "x.py.txt": "not python\n",
    "noext": "# not markdown\n",
    "x.pyc": "binary",
    "x.py.": "trailing dot\n",
    # the tutorial's exclusions
    "docs/guide.md": "# Excluded\n",
    ".venv/lib/x.py": "excluded = 1\n",
    "deep/build/x.py": "excluded = 1\n",
    "deep/__pycache__/x.py": "excluded = 1\n",
    "tests/test_verify_guides.py": "excluded = 1\n",
    "tests/test_measure_facts.py": "excluded = 1\n",
    "tests/test_real.py": "def test_x():\n    pass\n",
    "notes.txt": "# not chunked\n",
    "builder/x.py": "not_excluded = 1\n",
    "docs.md": "# a file named like an excluded folder\n",
    ".github/workflows/README.md": "# Hidden folders are not excluded\n",
    "Docs/x.md": "# Excluded names are case-sensitive\n",
    # files the tutorial crashes on
    "bad/syntax.py": "def f(:\n",
    "bad/latin1.py": b"X = '\xe9'\n",
    "bad/latin1.md": b"# caf\xe9\n",
    "bad/bom.py": b"\xef\xbb\xbfX = 1\n",
    "bad/nul.py": b"X = 1\x00\n",
    "bad/indent.py": "def f():\nreturn 1\n",
    "bad/vtab.py": "X = 1\v\n",
}


def test_tricky_tree_matches_the_tutorial(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE_TRICKY)
    chunks = assert_same_as_tutorial(tmp_path)
    ids = [chunk.chunk_id for chunk in chunks]
    # the tricky cases really are in the corpus (not silently equal by both being empty)
    assert "src/overloads.py#function-f" in ids
    assert "UPPER.PY#function-shout" in ids
    assert "doc/unicode.md#heading-section-3" in ids
    assert not any(cid.startswith(("docs/", ".venv/", "deep/")) for cid in ids)
    assert ".py#module-1" not in ids


def test_markdown_bom_and_nul_bytes_are_chunked_as_the_tutorial_does(tmp_path: Path) -> None:
    """The tutorial reads Markdown as text and never crashes on a BOM or NUL."""
    write_tree(tmp_path, {"bom.md": b"\xef\xbb\xbf# Title\nx\n", "nul.md": b"# A\nx\x00y\n"})
    chunks = assert_same_as_tutorial(tmp_path)
    assert [chunk.chunk_id for chunk in chunks] == [
        "bom.md#heading-preamble",  # "\ufeff# Title" is not a heading line
        "nul.md#heading-a",
    ]


def test_symlinks_inside_the_root_carry_the_targets_path(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real/target.py": "def t():\n    pass\n", "real/guide.md": "# G\n"})
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "target.py")
    (tmp_path / "relative.md").symlink_to(Path("real") / "guide.md")
    (tmp_path / "linkdir").symlink_to(tmp_path / "real", target_is_directory=True)
    write_tree(tmp_path, {"docs/hidden.py": "def h():\n    pass\n"})
    (tmp_path / "to_excluded.py").symlink_to(tmp_path / "docs" / "hidden.py")
    chunks = assert_same_as_tutorial(tmp_path)
    assert [chunk.chunk_id for chunk in chunks] == [
        "real/target.py#function-t",  # link.py
        "real/guide.md#heading-g",
        "real/target.py#function-t",
        "real/guide.md#heading-g",  # relative.md; linkdir/ is not followed
        "docs/hidden.py#function-h",  # the link is in the corpus, its target is not
    ]


def test_root_given_as_a_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"proj/a.py": "def f():\n    pass\n", "proj/b/c.md": "# C\n"})
    monkeypatch.chdir(tmp_path)
    chunks = assert_same_as_tutorial(Path("proj"))
    assert [chunk.chunk_id for chunk in chunks] == ["a.py#function-f", "b/c.md#heading-c"]


def test_root_reached_through_a_symlink(tmp_path: Path) -> None:
    write_tree(tmp_path, {"proj/a.py": "def f():\n    pass\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "proj", target_is_directory=True)
    chunks = assert_same_as_tutorial(tmp_path / "alias")
    assert [chunk.source_path for chunk in chunks] == ["a.py"]


def test_chunk_file_matches_the_tutorial_file_by_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {**PY_TRICKY, **MD_TRICKY})
    for name in sorted({**PY_TRICKY, **MD_TRICKY}):
        path = tmp_path / name
        assert chunk_file(path, tmp_path) == [
            Chunk(*dataclasses.astuple(chunk)) for chunk in tutorial.chunk_file(path, tmp_path)
        ], name
        # without a root, the source path is the absolute resolved path
        assert [c.source_path for c in chunk_file(path)] == [
            c.source_path for c in tutorial.chunk_file(path)
        ]


# -- generated trees -----------------------------------------------------------


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_generated_trees_match_the_tutorial(tree: Tree) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_tree(root, tree)
        assert_same_as_tutorial(root)


@settings(max_examples=50, deadline=None)
@given(python_source(), markdown_source())
def test_generated_files_match_the_tutorial(python: str, markdown: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_tree(root, {"m.py": python, "m.md": markdown})
        assert_same_as_tutorial(root)
