"""The workspace index: located chunks by folder, file and ID, searchable, and
the one path that changes them; one job per module (``queries``: the query API
every front door asks; ``store``: its one implementation; ``session``: the one
write step).

Callers import from the module that does the job: the CLI answering from the
cache read in place does not load the in-memory postings, numpy or the bulk indexer.
"""
