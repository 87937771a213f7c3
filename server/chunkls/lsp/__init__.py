"""The language server: the only part of chunkls that imports pygls. A feature module
(``setup.FEATURES``) imports no other feature, and ``server`` only for typing; what they
share has a module of its own (``documents``, ``written_ids``, ``ranges``)."""
