"""The code attrs compiles for lsprotocol's ~1,000 classes at every start, kept between
starts, keyed by a hash of each script and file name (with the interpreter's magic number).

Why (issue 46): importing ``chunkls.lsp.setup``, 11 alternated runs: 0.383 s median with the
kept code, 0.535 s compiling it (early answers hide it from the first lens only).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import marshal
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

from chunkls.lsp import compat
from chunkls.runtime.early_reader import write_whole

logger = logging.getLogger("chunkls")

VERSION = b"chunkls-attrs-code-1"
_DIGEST = 16
_HEADER = len(importlib.util.MAGIC_NUMBER) + len(VERSION) + _DIGEST
MAX_BYTES = 16 << 20
"""A larger file is not read (lsprotocol's methods make about 1.2 MB)."""
SAVE_AFTER_MISSES = 8
"""Scripts compiled in a run from which the file is written again. attrs salts
each ``__hash__`` it generates with ``hash()`` of a string, which differs from
one process to the next, so a start always compiles a few."""


@dataclass(slots=True)
class AttrsCodeUse:
    """How a run of ``attrs_code_cached`` went."""

    installed: bool = False
    """Whether attrs was as assumed (else nothing was cached)."""
    hits: int = 0
    """Scripts whose kept code ran."""
    misses: int = 0
    """Scripts compiled."""


def script_key(script: str, filename: str) -> bytes:
    """What a compiled script is kept under."""
    key = hashlib.blake2b(filename.encode("utf-8", "surrogatepass"), digest_size=_DIGEST)
    key.update(b"\0")
    key.update(script.encode("utf-8", "surrogatepass"))
    return key.digest()


def read(path: Path) -> dict[bytes, CodeType]:
    """The code objects kept in ``path`` (none: missing, another Python's, damaged, large)."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError:
        return {}
    head = importlib.util.MAGIC_NUMBER + VERSION
    payload = data[_HEADER:]
    if (
        len(data) > MAX_BYTES
        or not data.startswith(head)
        or data[len(head) : _HEADER] != hashlib.blake2b(payload, digest_size=_DIGEST).digest()
    ):
        return {}
    try:
        codes = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {
        key: code
        for key, code in codes.items()
        if isinstance(key, bytes) and isinstance(code, CodeType)
    }


def write(path: Path, codes: Mapping[bytes, CodeType]) -> None:
    """Keep ``codes`` in ``path`` (written aside, then renamed into place)."""
    payload = marshal.dumps(dict(codes))
    digest = hashlib.blake2b(payload, digest_size=_DIGEST).digest()
    write_whole(path, importlib.util.MAGIC_NUMBER + VERSION + digest + payload, path.name)


@contextlib.contextmanager
def attrs_code_cached(path: Path) -> Iterator[AttrsCodeUse]:
    """While inside, attrs runs kept code instead of compiling; on leaving, this run's code is
    kept if enough was new. A file that cannot be read or written only costs the compiling."""
    use = AttrsCodeUse()
    kept = read(path)
    used: dict[bytes, CodeType] = {}

    def compile_and_eval(
        script: str, globs: Any, locs: Mapping[str, object] | None = None, filename: str = ""
    ) -> None:
        key = script_key(script, filename)
        code = kept.get(key)
        if code is None:
            code = compile(script, filename, "exec")
            use.misses += 1
        else:
            use.hits += 1
        used[key] = code
        eval(code, globs, locs)

    original = compat.swap_attrs_compile(compile_and_eval)
    if original is None:
        logger.debug("attrs is not as chunkls.lsp.compat assumes: its code is not kept")
        yield use
        return
    use.installed = True
    try:
        yield use
    finally:
        if compat.swap_attrs_compile(None) is compile_and_eval:
            compat.swap_attrs_compile(original)
        if use.misses >= SAVE_AFTER_MISSES:
            try:
                write(path, used)
            except OSError as error:
                logger.debug("could not keep attrs's compiled code in %s: %s", path, error)
