"""``python -m chunkls``: the same as the ``chunkls`` console script."""

from chunkls.cli import run

run()
