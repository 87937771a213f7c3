"""The chunker: the tutorial's rules, pure Python, no editor or protocol code."""

from chunkls.chunking.chunker import (
    ChunkingError,
    chunk_markdown_source,
    chunk_python_source,
    chunk_source,
    decode_source,
    file_type_for,
    normalize_newlines,
)
from chunkls.chunking.corpus import (
    CONFIG_KEYS,
    ConfigProblem,
    CorpusFile,
    CorpusRules,
    FileSkipped,
    SkippedFile,
    load_rules,
    rules_from_mapping,
    walk_corpus,
)
from chunkls.chunking.ingest import (
    FileChunks,
    Scan,
    bulk_gc,
    chunk_corpus_file,
    chunk_file,
    chunk_markdown,
    chunk_python,
    ingest_path,
    scan_corpus,
)
from chunkls.chunking.models import Chunk, LocatedChunk

__all__ = [
    "CONFIG_KEYS",
    "Chunk",
    "ChunkingError",
    "ConfigProblem",
    "CorpusFile",
    "CorpusRules",
    "FileChunks",
    "FileSkipped",
    "LocatedChunk",
    "Scan",
    "SkippedFile",
    "bulk_gc",
    "chunk_corpus_file",
    "chunk_file",
    "chunk_markdown",
    "chunk_markdown_source",
    "chunk_python",
    "chunk_python_source",
    "chunk_source",
    "decode_source",
    "file_type_for",
    "ingest_path",
    "load_rules",
    "normalize_newlines",
    "rules_from_mapping",
    "scan_corpus",
    "walk_corpus",
]
