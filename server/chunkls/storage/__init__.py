"""The persistent cache: one SQLite file per workspace folder, with its mapped postings."""
