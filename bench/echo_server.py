"""A stand-in language server for the benchmark: a stock pygls ``LanguageServer``
that answers every hover with the same hover-sized text and every definition with
one location, with no work behind them.

Served over the same pipes, with the same client, its figures are what any pygls
server pays for the pipes, the two processes' wake-ups, JSON, typing and pygls's
dispatch. ``--reader chunkls`` serves the very same server with chunkls's stdio
reader (``chunkls.lsp.stdio.serve_stdio``) instead of pygls's ``start_io``: the
difference is what that reader is worth.

    python bench/echo_server.py [--reader pygls|chunkls]
"""

from __future__ import annotations

import argparse
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

ANSWER = "x" * 600
"""About the size of a chunk's hover."""

server = LanguageServer("stand-in", "1")


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover:
    """The same hover, whatever is asked."""
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=ANSWER))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: types.DefinitionParams) -> list[types.Location]:
    """The start of the document asked about."""
    start = types.Position(line=0, character=0)
    return [types.Location(uri=params.text_document.uri, range=types.Range(start, start))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", choices=("pygls", "chunkls"), default="pygls")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.reader == "chunkls":
        from chunkls.lsp.stdio import serve_stdio

        serve_stdio(server)
    else:
        server.start_io()


if __name__ == "__main__":
    main()
