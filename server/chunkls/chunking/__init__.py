"""The chunker: the tutorial's rules, pure Python, no editor or protocol code.

The names below are looked up in their modules on first use (PEP 562): a
process that only walks a corpus or reads its cache (the CLI answering from the
cache in place) imports ``corpus`` and ``models`` without the parsing machinery
(``ingest``, ``bytecode`` and numpy's ``scan``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunkls.runtime.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from chunkls.chunking.chunker import (
        ChunkingError,
        chunk_markdown_source,
        chunk_python_source,
        chunk_source,
        decode_source,
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
    from chunkls.chunking.suffixes import file_type_for

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

_MODULE_OF = {
    "ChunkingError": "chunker",
    "chunk_markdown_source": "chunker",
    "chunk_python_source": "chunker",
    "chunk_source": "chunker",
    "decode_source": "chunker",
    "file_type_for": "suffixes",
    "normalize_newlines": "chunker",
    "CONFIG_KEYS": "corpus",
    "ConfigProblem": "corpus",
    "CorpusFile": "corpus",
    "CorpusRules": "corpus",
    "FileSkipped": "corpus",
    "SkippedFile": "corpus",
    "load_rules": "corpus",
    "rules_from_mapping": "corpus",
    "walk_corpus": "corpus",
    "FileChunks": "ingest",
    "Scan": "ingest",
    "bulk_gc": "ingest",
    "chunk_corpus_file": "ingest",
    "chunk_file": "ingest",
    "chunk_markdown": "ingest",
    "chunk_python": "ingest",
    "ingest_path": "ingest",
    "scan_corpus": "ingest",
    "Chunk": "models",
    "LocatedChunk": "models",
}
"""Each name of ``__all__``, and the module that defines it."""


__getattr__, __dir__ = lazy_exports(__name__, _MODULE_OF, globals())
