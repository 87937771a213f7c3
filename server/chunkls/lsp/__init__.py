"""The language server: the only part of chunkls that imports pygls.

``setup`` wires the feature modules (``setup.FEATURES``) into the server
(``server``: its state and the one path that changes the index). A feature
imports no other feature, and ``server`` only for typing; what they share has a
module of its own: ``documents`` (a document's text, folder, lines and
chunking), ``written_ids`` (the chunk IDs written in a document and what they resolve
to) and ``ranges`` (every LSP range and location).
"""
