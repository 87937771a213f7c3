"""The workspace index: located chunks by folder, file and ID, searchable, and
the one path that changes them.

One job per module: ``folder`` (a corpus root and its chunk maps), ``queries``
(the query API every front door asks), ``store`` (its one implementation, with
the one change path ``set_file``), ``session`` (a process's roots and the one
write step ``catch_up``), ``bulk`` and ``workers`` (whole folders indexed),
``refresh`` (files re-read), ``citations`` (who cites what, unknown IDs and
their replacements), ``suggest`` (the IDs closest to an unknown one), ``id_map``
(which files hold an ID).

Callers import from the module that does the job: the CLI answering from the
cache read in place does not load the in-memory postings, numpy or the bulk indexer.
"""
