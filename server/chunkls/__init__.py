"""chunkls: retrieval chunk IDs as first-class citizens in the editor."""

from __future__ import annotations

__all__ = ["__version__"]

_FALLBACK_VERSION = "0.1.0"
"""The version when the package metadata is missing (a bundled libs folder)."""


def __getattr__(name: str) -> str:
    """``__version__``, read from the package metadata on first use:
    ``importlib.metadata`` costs tens of milliseconds to import, which a command
    that never shows the version (``chunkls --help``) does not pay."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("chunkls")
    except PackageNotFoundError:
        found = _FALLBACK_VERSION
    globals()["__version__"] = found
    return found
