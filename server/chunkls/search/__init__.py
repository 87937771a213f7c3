"""Search over chunks: the tokenizer, the vocabulary, postings, the in-memory inverted
index and the one BM25 scorer.
"""
