"""Corpus composition and walking, and files that cannot be chunked.

Every file that cannot be chunked is skipped and reported exactly once, with
its path and a one-line reason, and every other file is still chunked.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chunkls.chunking import ingest as ingest_module
from chunkls.chunking.corpus import CorpusRules, SkippedFile, walk_corpus
from chunkls.chunking.ingest import scan_corpus
from chunkls.index.session import build_index
from tests.reference import tutorial_ingest as tutorial

from .strategies import write_tree

GOOD = {
    "a.py": "def f():\n    pass\n",
    "z/README.md": "# Hello\ntext\n",
}
GOOD_IDS = ["a.py#function-f", "z/README.md#heading-hello"]


# -- composition and order -----------------------------------------------------------


def test_the_tutorials_ingest_path_example(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "README.md": "# Project\n",
            "app/feature.py": "def feature():\n    pass\n",
            "notes.txt": "not chunked\n",
            ".venv/lib/site.py": "X = 1\n",
            "docs/guide.md": "# Guide\n",
            "harness/run.py": "X = 1\n",
            "tests/test_verify_guides.py": "X = 1\n",
        },
    )
    paths = [file.rel_path for file in walk_corpus(tmp_path, CorpusRules()).files]
    assert paths == ["README.md", "app/feature.py"]
    ids = [chunk.chunk_id for chunk in scan_corpus(tmp_path).chunks()]
    assert ids == ["README.md#heading-project", "app/feature.py#function-feature"]


@pytest.mark.parametrize("folder", sorted(tutorial._EXCLUDED_DIRECTORIES))
def test_each_excluded_folder_at_any_depth(tmp_path: Path, folder: str) -> None:
    write_tree(tmp_path, {f"{folder}/a.py": "X = 1\n", f"x/{folder}/y/b.md": "# B\n", "k.py": ""})
    assert [f.rel_path for f in walk_corpus(tmp_path, CorpusRules()).files] == ["k.py"]


@pytest.mark.parametrize("name", sorted(tutorial._EXCLUDED_FILES))
def test_each_excluded_file_name_at_any_depth(tmp_path: Path, name: str) -> None:
    write_tree(tmp_path, {name: "X = 1\n", f"tests/{name}": "X = 1\n", "tests/test_ok.py": ""})
    assert [f.rel_path for f in walk_corpus(tmp_path, CorpusRules()).files] == ["tests/test_ok.py"]


@pytest.mark.parametrize(
    ("name", "included"),
    [
        ("a.py", True),
        ("a.md", True),
        ("a.markdown", True),
        ("A.PY", True),
        ("A.Md", True),
        ("a.MARKDOWN", True),
        ("a.txt", False),
        ("a.pyi", False),
        ("a.rst", False),
        ("a.mdx", False),
        (".py", False),
        (".md", False),
        ("a.py.bak", False),
        ("a.py.", False),
        ("py", False),
    ],
)
def test_supported_suffixes(tmp_path: Path, name: str, included: bool) -> None:
    write_tree(tmp_path, {name: "# X\n" if "m" in name.lower() else "X = 1\n"})
    assert [f.rel_path for f in walk_corpus(tmp_path, CorpusRules()).files] == (
        [name] if included else []
    )


def test_corpus_order_is_the_tutorials_string_order(tmp_path: Path) -> None:
    names = ["a-b/x.py", "a.py", "a/x.py", "a_b/x.py", "aB.py", "Z.py", "a/b/c.md", "a/b.md"]
    write_tree(tmp_path, dict.fromkeys(names, "X = 1\n"))
    walked = [f.rel_path for f in walk_corpus(tmp_path, CorpusRules()).files]
    assert walked == sorted(names)
    assert walked == [
        "Z.py",
        "a-b/x.py",
        "a.py",
        "a/b.md",
        "a/b/c.md",
        "a/x.py",
        "aB.py",
        "a_b/x.py",
    ]


def test_symlinked_folders_are_not_followed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"real/a.py": "X = 1\n"})
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "alias.py").symlink_to(tmp_path / "real", target_is_directory=True)
    walk = walk_corpus(tmp_path, CorpusRules())
    assert [f.rel_path for f in walk.files] == ["alias.py", "real/a.py"]
    scan = scan_corpus(tmp_path)
    assert [c.chunk_id for c in scan.chunks()] == ["real/a.py#module-1"]
    assert scan.skipped == [SkippedFile("alias.py", "symlink to a directory, not a regular file")]


def test_walk_under_one_folder(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/x.py": "", "a/b/y.py": "", "c/z.py": "", "docs/w.py": ""})
    rules = CorpusRules()
    assert [f.rel_path for f in walk_corpus(tmp_path, rules, under="a").files] == [
        "a/b/y.py",
        "a/x.py",
    ]
    assert walk_corpus(tmp_path, rules, under="docs").files == []


def test_a_root_that_does_not_exist_is_reported_as_such(tmp_path: Path) -> None:
    walk = walk_corpus(tmp_path / "missing", CorpusRules())
    assert walk.files == []
    assert walk.skipped == [SkippedFile(".", "the folder does not exist")]
    (tmp_path / "there").mkdir()
    under = walk_corpus(tmp_path / "there", CorpusRules(), under="gone")
    assert under.skipped == [SkippedFile("gone", "the folder does not exist")]


# -- files that cannot be chunked ------------------------------------------------------

Setup = Callable[[Path], None]


def _bytes(name: str, data: bytes) -> Setup:
    def setup(root: Path) -> None:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)

    return setup


def _mkdir(root: Path) -> None:
    (root / "pkg" / "x.py").mkdir(parents=True)
    (root / "pkg" / "x.py" / "inner.py").write_text("def inner():\n    pass\n")


def _fifo(root: Path) -> None:
    os.mkfifo(root / "x.py")


def _socket(root: Path) -> None:
    path = root / "x.py"
    if len(os.fsencode(path)) > 100:
        pytest.skip("socket path too long for AF_UNIX")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.fspath(path))
    sock.close()


def _broken_symlink(root: Path) -> None:
    (root / "x.py").symlink_to(root / "missing.py")


def _symlink_loop(root: Path) -> None:
    (root / "x.py").symlink_to(root / "y.txt")
    (root / "y.txt").symlink_to(root / "x.py")


def _self_loop(root: Path) -> None:
    (root / "x.py").symlink_to(root / "x.py")


def _outside_symlink(root: Path) -> None:
    outside = root.parent / f"{root.name}-outside.py"
    outside.write_text("SECRET = 1\n")
    (root / "x.py").symlink_to(outside)


def _symlink_to_fifo(root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "x.py").symlink_to(root / "pipe")


def _big(root: Path) -> None:
    with open(root / "x.md", "wb") as file:
        file.truncate(10 * 1024 * 1024 + 1)  # sparse: 10 MiB + 1 byte of NULs


BAD_FILES: list[tuple[str, Setup, str, str]] = [
    # id, setup, skipped path, reason (prefix)
    ("syntax", _bytes("x.py", b"X = 1\n\ndef f(:\n"), "x.py", "SyntaxError line 3: "),
    ("bom", _bytes("x.py", b"\xef\xbb\xbfX = 1\n"), "x.py", "starts with a UTF-8 byte-order mark"),
    (
        "latin1",
        _bytes("x.py", b"S = '\xe9t\xe9'\n"),
        "x.py",
        "not valid UTF-8 (byte 0xe9 at offset 5)",
    ),
    (
        "latin1-md",
        _bytes("x.md", b"# Caf\xe9\n"),
        "x.md",
        "not valid UTF-8 (byte 0xe9 at offset 5)",
    ),
    ("nul", _bytes("x.py", b"X = 1\x00\n"), "x.py", "contains NUL bytes"),
    ("deep", _bytes("x.py", b"x = " + b"-" * 200_000 + b"1\n"), "x.py", "Error: nesting too deep"),
    ("too-big", _big, "x.md", "10,485,761 bytes, over the 10,485,760-byte limit"),
    ("directory", _mkdir, "pkg/x.py", "not a regular file (a directory)"),
    ("fifo", _fifo, "x.py", "not a regular file (a FIFO)"),
    ("socket", _socket, "x.py", "not a regular file (a socket)"),
    ("broken-symlink", _broken_symlink, "x.py", "broken symlink: its target does not exist"),
    ("symlink-loop", _symlink_loop, "x.py", "symlink loop"),
    ("self-loop", _self_loop, "x.py", "symlink loop"),
    ("outside-symlink", _outside_symlink, "x.py", "symlink to "),
    ("symlink-to-fifo", _symlink_to_fifo, "x.py", "symlink to a FIFO, not a regular file"),
]


@pytest.mark.parametrize(
    ("setup", "rel_path", "reason"),
    [pytest.param(*case[1:], id=case[0]) for case in BAD_FILES],
)
def test_a_bad_file_is_skipped_once_and_everything_else_is_chunked(
    tmp_path: Path, setup: Setup, rel_path: str, reason: str
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_tree(root, GOOD)
    setup(root)
    scan = scan_corpus(root)
    ids = [chunk.chunk_id for chunk in scan.chunks()]
    if rel_path == "pkg/x.py":  # the folder named x.py is still walked
        assert ids == ["a.py#function-f", "pkg/x.py/inner.py#function-inner", GOOD_IDS[1]]
    else:
        assert ids == GOOD_IDS
    assert len(scan.skipped) == 1
    [skipped] = scan.skipped
    assert skipped.rel_path == rel_path
    assert reason in skipped.reason
    assert "\n" not in skipped.reason
    # the index built from the same tree reports it once too
    index = build_index([root])
    assert [(rel, why) for _, rel, why in index.queries.skipped()] == [(rel_path, skipped.reason)]
    assert [entry.chunk.chunk_id for entry in index.queries.chunks()] == ids


def test_deep_nesting_reason_is_recursion_or_memory_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x.py": "x = " + "-" * 200_000 + "1\n"})
    [skipped] = scan_corpus(tmp_path).skipped
    assert skipped.reason in (
        "RecursionError: nesting too deep for ast.parse",
        "MemoryError: nesting too deep for ast.parse",
    )


def test_outside_symlink_reason_names_the_target(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _outside_symlink(root)
    [skipped] = scan_corpus(root).skipped
    target = (tmp_path / "root-outside.py").resolve()
    assert skipped.reason == f"symlink to {target}, outside the workspace root: not indexed"


def test_a_symlink_inside_the_root_uses_the_targets_path(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/real.py": "def r():\n    pass\n"})
    (tmp_path / "alias.py").symlink_to(Path("pkg") / "real.py")
    scan = scan_corpus(tmp_path)
    assert scan.skipped == []
    assert [(f.rel_path, [c.chunk_id for c in f.chunks]) for f in scan.files] == [
        ("alias.py", ["pkg/real.py#function-r"]),
        ("pkg/real.py", ["pkg/real.py#function-r"]),
    ]
    assert [c.chunk_id for c in tutorial.ingest_path(tmp_path)] == [
        c.chunk_id for c in scan.chunks()
    ]


def test_a_symlink_to_a_file_with_another_suffix_is_chunked_by_the_links_suffix(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path, {"notes.txt": "# Heading\n"})
    (tmp_path / "notes.md").symlink_to(tmp_path / "notes.txt")
    assert [c.chunk_id for c in scan_corpus(tmp_path).chunks()] == ["notes.txt#heading-heading"]


def test_max_file_size_is_configurable(tmp_path: Path) -> None:
    write_tree(tmp_path, {"small.py": "X = 1\n", "big.py": "X = 1  # " + "x" * 100 + "\n"})
    rules = CorpusRules().extended(max_file_size=50)
    scan = scan_corpus(tmp_path, rules)
    assert [c.chunk_id for c in scan.chunks()] == ["small.py#module-1"]
    assert scan.skipped == [
        SkippedFile("big.py", "110 bytes, over the 50-byte limit (max-file-size)")
    ]
    # exactly at the limit is fine
    assert scan_corpus(tmp_path, CorpusRules().extended(max_file_size=110)).skipped == []


def test_the_default_size_limit_admits_a_file_of_exactly_10_mib(tmp_path: Path) -> None:
    with open(tmp_path / "x.md", "wb") as file:
        file.truncate(10 * 1024 * 1024)
    scan = scan_corpus(tmp_path)
    assert scan.skipped == []
    assert [c.chunk_id for c in scan.chunks()] == ["x.md#heading-preamble"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_skipped(tmp_path: Path) -> None:
    write_tree(tmp_path, {**GOOD, "secret.py": "X = 1\n"})
    (tmp_path / "secret.py").chmod(0)
    try:
        scan = scan_corpus(tmp_path)
    finally:
        (tmp_path / "secret.py").chmod(0o644)
    assert [c.chunk_id for c in scan.chunks()] == GOOD_IDS
    assert scan.skipped == [SkippedFile("secret.py", "permission denied: the file is not readable")]


def test_a_file_that_cannot_be_opened_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same code path as a file without read permission, for root too."""
    write_tree(tmp_path, {**GOOD, "secret.py": "X = 1\n"})
    real_open = os.open

    def deny(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if os.fspath(path).endswith("secret.py"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    scan = scan_corpus(tmp_path)
    assert [c.chunk_id for c in scan.chunks()] == GOOD_IDS
    assert scan.skipped == [SkippedFile("secret.py", "permission denied: the file is not readable")]


def test_a_read_error_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {**GOOD, "flaky.py": "X = 1\n"})
    real_read, real_open, real_close = os.read, os.open, os.close
    flaky_fd: list[int] = []

    def open_(path: str, flags: int, *args: int, **kwargs: int) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        if os.fspath(path).endswith("flaky.py"):
            flaky_fd.append(fd)
        return fd

    def read(fd: int, n: int) -> bytes:
        if fd in flaky_fd:
            raise OSError(errno.EIO, "Input/output error")
        return real_read(fd, n)

    def close(fd: int) -> None:
        if fd in flaky_fd:
            flaky_fd.remove(fd)
        real_close(fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "read", read)
    monkeypatch.setattr(os, "close", close)
    scan = scan_corpus(tmp_path)
    assert [c.chunk_id for c in scan.chunks()] == GOOD_IDS
    assert scan.skipped == [SkippedFile("flaky.py", "cannot read the file: Input/output error")]


def test_a_file_deleted_between_listing_and_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {**GOOD, "gone.py": "X = 1\n", "gone.md": "# G\n"})
    real_walk = ingest_module.walk_corpus

    def walk_then_delete(root: Path, rules: CorpusRules, under: str = "") -> object:
        walk = real_walk(root, rules, under)
        assert "gone.py" in [f.rel_path for f in walk.files]
        (tmp_path / "gone.py").unlink()
        (tmp_path / "gone.md").unlink()
        return walk

    monkeypatch.setattr(ingest_module, "walk_corpus", walk_then_delete)
    scan = scan_corpus(tmp_path)
    assert [c.chunk_id for c in scan.chunks()] == GOOD_IDS
    assert scan.skipped == [
        SkippedFile("gone.md", "the file disappeared while indexing"),
        SkippedFile("gone.py", "the file disappeared while indexing"),
    ]


def test_an_unreadable_folder_is_reported_and_the_rest_chunked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {**GOOD, "locked/x.py": "X = 1\n"})
    real_scandir = os.scandir

    def scandir(path: str) -> Iterator[os.DirEntry[str]]:
        if os.fspath(path).endswith("locked"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    scan = scan_corpus(tmp_path)
    assert [c.chunk_id for c in scan.chunks()] == GOOD_IDS
    assert scan.skipped == [SkippedFile("locked", "permission denied: the folder is not readable")]


def test_many_bad_files_at_once(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_tree(root, GOOD)
    for i, (_, setup, _, _) in enumerate(BAD_FILES):
        if setup in (_socket, _big, _outside_symlink):
            continue
        sub = root / f"case{i:02d}"
        sub.mkdir()
        setup(sub)
    scan = scan_corpus(root)
    assert [c.chunk_id for c in scan.chunks() if "inner" not in c.chunk_id] == GOOD_IDS
    paths = [s.rel_path for s in scan.skipped]
    assert len(paths) == len(set(paths)) == len(BAD_FILES) - 3
