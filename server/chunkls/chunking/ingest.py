"""Chunking whole files and trees: the tutorial's entry points made robust (``scan_corpus``
reports the files that cannot be chunked instead of stopping on them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from chunkls.chunking import bytecode, symbol_table
from chunkls.chunking.chunker import (
    ChunkingError,
    chunk_markdown_source,
    chunk_python_outline,
    chunk_python_source,
    chunk_source,
    decode_source,
    normalize_newlines,
)
from chunkls.chunking.corpus import (
    CorpusFile,
    CorpusRules,
    FileSkipped,
    SkippedFile,
    read_corpus_file,
    walk_corpus,
)
from chunkls.chunking.located_chunk import LocatedChunk
from chunkls.chunking.suffixes import file_type_for, suffix_of
from chunkls.chunking.tutorial_chunk import Chunk
from chunkls.runtime.gc_budget import no_gc_pauses


def _source_path(path: Path, root: Path | None) -> str:
    resolved = path.resolve()
    if root is not None:
        with suppress(ValueError):
            resolved = resolved.relative_to(root.resolve())
    return PurePosixPath(resolved).as_posix()


def _read(path: Path) -> str:
    return normalize_newlines(path.read_text(encoding="utf-8"))


def chunk_python(path: Path, root: Path | None = None) -> list[Chunk]:
    """Chunk a Python file at top-level function and class boundaries."""
    chunks = chunk_python_source(_read(path), _source_path(path, root), str(path))
    return [chunk.to_chunk() for chunk in chunks]


def chunk_markdown(path: Path, root: Path | None = None) -> list[Chunk]:
    """Chunk Markdown into sections beginning at each heading."""
    chunks = chunk_markdown_source(_read(path), _source_path(path, root))
    return [chunk.to_chunk() for chunk in chunks]


def chunk_file(path: Path, root: Path | None = None) -> list[Chunk]:
    """Dispatch a supported source file to its chunker."""
    suffix = suffix_of(path.name)
    if suffix == ".py":
        return chunk_python(path, root)
    if suffix in {".md", ".markdown"}:
        return chunk_markdown(path, root)
    raise ValueError(f"Unsupported file type: {path.suffix or '<none>'}")


class FileChunks(NamedTuple):
    """The chunks of one corpus file and the stat data they were read with."""

    rel_path: str
    chunks: tuple[LocatedChunk, ...]
    mtime_ns: int
    size: int


class Scan(NamedTuple):
    """A whole tree chunked: files in corpus order, and what was skipped."""

    files: list[FileChunks]
    skipped: list[SkippedFile]

    def chunks(self) -> Iterator[LocatedChunk]:
        """Every chunk in corpus order."""
        for file in self.files:
            yield from file.chunks


def read_and_chunk(
    root_resolved: Path, file: CorpusFile, rules: CorpusRules, skip_ast: bool = False
) -> tuple[FileChunks, bytes]:
    """Read and chunk one corpus file, with its bytes (``FileSkipped``: why not).
    ``skip_ast``: outline Python by the scan when bytecode or the symbol table vouches."""
    source = read_corpus_file(
        root_resolved, file.rel_path, file.path, file.is_symlink, rules.max_file_size
    )
    name = file.rel_path.rsplit("/", 1)[-1]
    try:
        text = decode_source(source.data)
        outline = None
        if skip_ast and file_type_for(name) == "code":
            outline = bytecode.outline(file.path, source.data, source.mtime_ns, source.size)
            if outline is None:
                outline = symbol_table.outline(text, source.data, file.rel_path)
        if outline is not None:
            chunks = chunk_python_outline(outline, text, source.source_path)
        else:
            chunks = chunk_source(text, source.source_path, name)
    except ChunkingError as error:
        raise FileSkipped(error.reason) from None
    return FileChunks(file.rel_path, tuple(chunks), source.mtime_ns, source.size), source.data


def scan_corpus(root: Path, rules: CorpusRules | None = None) -> Scan:
    """Chunk every corpus file under ``root`` serially, in corpus order."""
    rules = rules or CorpusRules()
    root_resolved = root.resolve()
    with no_gc_pauses():
        walk = walk_corpus(root, rules)
        files: list[FileChunks] = []
        skipped = list(walk.skipped)
        for file in walk.files:
            try:
                files.append(read_and_chunk(root_resolved, file, rules)[0])
            except FileSkipped as error:
                skipped.append(SkippedFile(file.rel_path, error.reason))
    skipped.sort()
    return Scan(files, skipped)


def ingest_path(root: Path) -> list[Chunk]:
    """Recursively chunk supported repository files in deterministic order (files
    that cannot be chunked are left out: ``scan_corpus`` says which and why)."""
    return [chunk.to_chunk() for chunk in scan_corpus(root).chunks()]
