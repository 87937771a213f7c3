"""Search: the tokenizer, the postings, the one BM25 scorer and the rankings on it.

The names of the modes are here, importing nothing: the command line's parser
and the ``[tool.chunkls]`` reader name them without loading the scorer.
"""

MODES = ("hybrid", "bm25")
"""Every search mode, the default first (``chunkls.search.modes`` ranks in each)."""
DEFAULT_MODE = MODES[0]
