"""What is wrong with a command line, and the check of a root given on one."""

from __future__ import annotations

import os
from pathlib import Path


class UsageError(Exception):
    """A bad command line: reported with exit code 2, after the command's usage."""


def check_root(text: str) -> Path:
    """A root given on the command line, if it is a readable folder."""
    root = Path(text)
    if not root.exists():
        raise UsageError(f"root {text!r} does not exist")
    if not root.is_dir():
        raise UsageError(f"root {text!r} is not a directory")
    try:
        with os.scandir(root):
            pass
    except OSError as error:
        raise UsageError(f"root {text!r} is not readable: {error.strerror or error}") from None
    return root
