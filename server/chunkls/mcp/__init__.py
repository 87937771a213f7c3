"""The MCP front door: agents search, read, outline and check chunks by ID.

``tools`` holds the four tools and their answers (no MCP SDK code), ``service``
the one answering path over a session kept fresh by ``freshness``, ``server``
the official MCP SDK's stdio server around them. Nothing here imports
``chunkls.lsp``, and nothing there imports this.
"""
