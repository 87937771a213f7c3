"""Where chunk IDs are written in text: the grammar and its written forms, the strings
and comments of Python source, JSON strings, ``chunkls: ignore`` markers, and
positions in a text's lines (offsets to editor lines and columns).
"""
