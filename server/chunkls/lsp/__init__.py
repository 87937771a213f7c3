"""The language server: the only part of chunkls that imports pygls."""
