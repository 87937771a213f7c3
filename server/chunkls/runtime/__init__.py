"""Process plumbing: indexing worker processes, memory returned after bulk work,
outputs whose reader has gone, answers while a server loads, lazy package exports.
"""
