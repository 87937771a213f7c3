"""Process plumbing, below everything else: answers while a server loads (the
early reader and the answers kept between starts), memory returned after bulk
work, outputs whose reader has gone.
"""
