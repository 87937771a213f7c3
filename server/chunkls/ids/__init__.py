"""Where chunk IDs are written in text: the grammar, Python literals, JSON strings,
``chunkls: ignore`` markers, and LSP positions."""
