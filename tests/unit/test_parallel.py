"""Worker-process chunking gives exactly the serial chunker's results."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from chunkls.chunking.corpus import CorpusFile, CorpusRules, walk_corpus
from chunkls.chunking.ingest import scan_corpus
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.index.session import Session, build_index
from chunkls.index.workers import Chunked, chunk_many, chunk_one, default_workers
from chunkls.search.definitions import chunk_terms
from chunkls.search.tokens import file_terms
from chunkls.storage.packed import StoredFile, unpack_stubs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "workspace"


def unpack(stored: StoredFile) -> tuple[LocatedChunk, ...]:
    """A stored file's chunks with their texts."""
    assert stored.texts is not None
    return unpack_stubs(stored.stubs, stored.texts)


def _tree(root: Path, files: int = 90) -> Path:
    """A tree big enough for the worker path, with files of very different sizes
    and files that must be skipped."""
    for i in range(files):
        folder = root / f"pkg{i % 7}"
        folder.mkdir(exist_ok=True)
        body = "\n\n".join(f"def f{i}_{j}(x):\n    return x + {j}\n" for j in range(i % 13 + 1))
        (folder / f"mod{i}.py").write_text(f'"""Module {i}."""\n\nimport os\n\n{body}')
        (folder / f"notes{i}.md").write_text(f"# Notes {i}\n\ntext {i}\n\n## More\n\nmore\n")
    (root / "broken.py").write_text("def broken(:\n")
    (root / "binary.py").write_bytes(b"x = 1\0\n")
    (root / "latin.md").write_bytes(b"caf\xe9\n")
    return root


def _results(results: list[Chunked | None]) -> dict[str, Chunked]:
    return {result.rel_path: result for result in results if result is not None}


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_workers_equal_serial(tmp_path: Path, workers: int) -> None:
    root = _tree(tmp_path)
    rules = CorpusRules()
    files = walk_corpus(root, rules).files
    serial = {file.rel_path: chunk_one(root.resolve(), file, rules) for file in files}
    parallel = _results(list(chunk_many(root.resolve(), files, rules, workers)))
    assert parallel == serial
    scan = scan_corpus(root, rules)
    assert [f.chunks for f in scan.files] == [
        unpack(parallel[f.rel_path].chunks)  # type: ignore[arg-type]
        for f in scan.files
    ]
    assert {s.rel_path: s.reason for s in scan.skipped} == {
        rel: r.skipped for rel, r in parallel.items() if r.skipped is not None
    }


def test_results_carry_the_serial_search_terms(tmp_path: Path) -> None:
    root = _tree(tmp_path, 70)
    rules = CorpusRules()
    files = walk_corpus(root, rules).files
    for result in _results(list(chunk_many(root.resolve(), files, rules, 2))).values():
        if result.chunks is not None:
            chunks = unpack(result.chunks)
            assert result.terms == chunk_terms(chunks).packed()
            # the tutorial's BM25 documents, then the symbol table's terms
            texts = [f"{c.chunk_id}\n{c.text}" for c in chunks]
            assert result.terms.lengths == file_terms(texts).lengths
            assert result.digest is not None


def test_parallel_index_equals_serial_index(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    serial = build_index([root], workers=1)
    parallel = build_index([root], workers=2)
    assert [c.chunk for c in serial.queries.chunks()] == [
        c.chunk for c in parallel.queries.chunks()
    ]
    assert [s[1:] for s in serial.queries.skipped()] == [s[1:] for s in parallel.queries.skipped()]
    for query in ["f3_2 return", "notes more text", "import os module"]:
        one = [(h.score, h.item.chunk) for h in serial.queries.search(query, 20)]
        two = [(h.score, h.item.chunk) for h in parallel.queries.search(query, 20)]
        assert one == two


def test_fixture_workspace(tmp_path: Path) -> None:
    serial = build_index([FIXTURE], workers=1)
    parallel = build_index([FIXTURE], workers=2)
    assert [c.chunk for c in serial.queries.chunks()] == [
        c.chunk for c in parallel.queries.chunks()
    ]


def test_default_workers_is_positive() -> None:
    assert default_workers() >= 1


@pytest.mark.skipif(
    not hasattr(os, "nice") or "fork" not in multiprocessing.get_all_start_methods(),
    reason="no os.nice or fork here",
)
def test_workers_run_below_the_editor_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chunkls.index.workers as parallel

    root = _tree(tmp_path, 70)
    rules = CorpusRules()
    files = walk_corpus(root, rules).files

    def niceness(
        root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
    ) -> Chunked:
        return Chunked(file.rel_path, None, None, f"nice {os.nice(0)}", None)

    monkeypatch.setattr(parallel, "chunk_one", niceness)
    # fork, so the workers run the patched function (other start methods import afresh)
    monkeypatch.setattr(parallel, "process_context", lambda: multiprocessing.get_context("fork"))
    found = {r.skipped for r in chunk_many(root.resolve(), files, rules, 2) if r is not None}
    assert found == {f"nice {min(os.nice(0) + parallel.NICENESS, 19)}"}


def test_a_long_lived_index_searches_as_a_short_lived_one(tmp_path: Path) -> None:
    """The server makes bulk-chunked files searchable at the end of the pass, the
    CLI as each one arrives: the same postings either way."""
    root = _tree(tmp_path)
    short = build_index([root], workers=2)
    long = Session(workers=2, long_lived=True)
    long.index_folder(long.add_root(root))
    for query in ["f3_2 return", "notes more text", "import os module", "mod17"]:
        one = [(h.score, h.item.chunk) for h in short.queries.search(query, 20)]
        two = [(h.score, h.item.chunk) for h in long.queries.search(query, 20)]
        assert one and one == two
