"""A digest of a server's code, so that an answer kept by other code is never sent."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path


def tree_digest(folders: Sequence[Path], salt: str = "") -> str:
    """A digest of the path, size and mtime of every ``.py`` file under ``folders``."""
    digest = hashlib.sha256(salt.encode("utf-8", "surrogateescape"))
    for folder in folders:
        digest.update(os.fsencode(folder) + b"\0")
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    info = os.stat(path)
                    digest.update(
                        b"%s\0%d\0%d\0" % (os.fsencode(path), info.st_size, info.st_mtime_ns)
                    )
    return digest.hexdigest()


def code_fingerprint(own: Path, packages: Sequence[str]) -> str:
    """chunkls's version, the interpreter, and every module of ``own`` and ``packages``
    (found without importing them); ``""`` if a package is not found."""
    from importlib.util import find_spec

    from chunkls import __version__

    folders = [own]
    for name in packages:
        spec = find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return ""
        folders.extend(Path(location) for location in spec.submodule_search_locations)
    return tree_digest(folders, f"{__version__}\0{sys.version}")
