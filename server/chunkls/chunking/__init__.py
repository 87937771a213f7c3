"""The chunker: the tutorial's rules, pure Python, no editor or protocol code.

Callers import from the module that does the job: a process that only walks a
corpus or reads its cache loads none of the parsing machinery.
"""
