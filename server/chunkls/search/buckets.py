"""Term buckets: how the persistent index groups search postings so that a
query reads only the rows of its own terms (``chunkls.index.ondisk``).

A term's bucket is a stable hash of its UTF-8 bytes (CRC-32, the same in every
process and on every platform) modulo the number of buckets, chosen when the
postings are saved (about ``TERMS_PER_BUCKET`` terms each).
"""

from __future__ import annotations

from zlib import crc32

TERMS_PER_BUCKET = 256
"""Terms per bucket on average: a query reads one row per distinct term, of
about this many terms' postings (tens of kB, unless it shares one with a common
term). Fewer rows are cheaper to write: on the stdlib's 506,630 terms, 32 per
bucket (15,832 rows) made a save 3x schema 5's two blobs, 256 (1,979 rows)
1.3-2x, 1,024 no better."""


def bucket_count(terms: int) -> int:
    """How many buckets postings of this many terms are saved in."""
    return max(1, terms // TERMS_PER_BUCKET)


term_hash = crc32
"""The hash of a term's UTF-8 bytes that ``bucket_of`` takes modulo the buckets
(a writer may hash many terms, then take the modulo at once)."""


def bucket_of(term: bytes, buckets: int) -> int:
    """The bucket of a term (UTF-8 encoded)."""
    return term_hash(term) % buckets
