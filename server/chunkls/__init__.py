"""chunkls: retrieval chunk IDs as first-class citizens in the editor."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chunkls")
except PackageNotFoundError:  # running from a bundled libs folder without metadata
    __version__ = "0.1.0"

__all__ = ["__version__"]
