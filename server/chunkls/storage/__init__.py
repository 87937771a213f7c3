"""The persistent cache: one SQLite file per workspace folder, the chunks kept packed,
the search postings saved (and mapped), the folders of the last walk.
"""
