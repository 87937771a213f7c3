"""The workspace index: located chunks by folder, file and ID, searchable, and
the one path that changes them.

One job per module:

- ``folder``: ``Folder`` (a corpus root, its rules and chunk maps, loaded or read
  in place from its cache), and ``IndexedChunk`` (what a lookup answers);
- ``queries``: ``Queries``, the query API every front door asks (a Protocol);
- ``store``: ``ChunkStore``, its one implementation: the chunk maps, the search
  postings, the one path that changes a file's chunks (``set_file``);
- ``session``: ``Session``, a process's roots, rules, index and freshness, and
  the one write step (``catch_up``) taken before a question is answered;
- ``bulk`` and ``workers``: whole folders indexed by worker processes, reused
  from the cache, or chunked in a separate process;
- ``refresh``: files re-read from disk into the store;
- ``citations``: who cites what, unknown IDs and their replacements;
- ``suggest``: the IDs closest to one that does not resolve;
- ``id_map``: which files hold an ID, by 96-bit keys.

Callers import from the module that does the job: the CLI answering from the
cache read in place does not load the in-memory postings, numpy or the bulk indexer.
"""
