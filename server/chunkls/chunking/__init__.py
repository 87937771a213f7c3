"""The chunker: the tutorial's rules, pure Python, no editor or protocol code.

One job per module: ``corpus`` (which files, ``[tool.chunkls]``), ``chunker``
(a text's chunks and their editor ranges), ``ingest`` (files and trees, the
tutorial's ``ingest_path``), ``outline``, ``scan``, ``bytecode`` and
``symbol_table`` (a file's top-level definitions, with or without ``ast.parse``:
a cached bytecode file or the symbol table vouches that a text parses),
``suffixes`` (which files, as what), ``models`` (``Chunk``, ``LocatedChunk``).
Callers import from the module that does the job: a process that only walks a
corpus or reads its cache loads none of the parsing machinery.
"""
