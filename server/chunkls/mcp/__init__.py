"""The MCP front door: agents search, read, outline and check chunks by ID.

One job per module:

- ``tools``: the four tools (names, descriptions, JSON schemas) and their
  answers, each a translation of the arguments into calls on the index's query
  API and of the result into structured content plus a text rendering that
  prints IDs as the CLI does; no MCP SDK code;
- ``freshness``: the index kept true between calls (a file watcher's changes
  and ``[tool.chunkls]`` edits applied before each call);
- ``server``: the official MCP SDK's stdio server around them (``run``).

Nothing here imports ``chunkls.lsp``, and nothing there imports this.
"""
