"""The chunker: the tutorial's rules, pure Python, no editor or protocol code (callers import
the module that does the job: walking a corpus loads no parsing machinery)."""
