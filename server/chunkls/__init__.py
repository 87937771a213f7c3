"""chunkls: retrieval chunk IDs as first-class citizens in the editor."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
"""The package's version, as ``pyproject.toml`` gives it (a test holds the two
together). A constant rather than a package-metadata lookup: ``importlib.metadata``
costs 20-40 ms to import, which every cache check (``chunkls.storage.cache``) would pay,
and a bundled libs folder has no metadata at all."""
