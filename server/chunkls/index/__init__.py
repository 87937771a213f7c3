"""The workspace index: ``queries`` (the query API), ``store`` (its one
implementation), ``session`` (the one write step). Callers import from the
module that does the job, so a warm CLI question loads no numpy or bulk indexer.
"""
