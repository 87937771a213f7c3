"""Search: the tokenizer, the postings, the one BM25 scorer and the rankings
built on it (``modes``: which ranking a search uses).

The names of the modes are here, importing nothing, for the command line's
parser and the ``[tool.chunkls]`` reader: neither loads the scorer to name them.
"""

MODES = ("hybrid", "bm25")
"""Every search mode, the default first (``chunkls.search.modes`` ranks in each)."""
DEFAULT_MODE = MODES[0]
