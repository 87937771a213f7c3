"""Process plumbing, below everything else: answers while a server loads (the
early reader and the answers kept between starts), the garbage collector and
exit tricks (``gc_budget``), memory returned after bulk work, outputs whose reader
has gone.
"""
