"""Search: the tokenizer, the postings, the one BM25 scorer and the rankings on it; the modes'
names here import nothing (the CLI's parser names them without loading the scorer)."""

MODES = ("hybrid", "bm25")
"""Every search mode, the default first (``chunkls.search.modes`` ranks in each)."""
DEFAULT_MODE = MODES[0]
