"""The MCP front door: agents search, read, outline and check chunks by ID (only ``server``
imports the MCP SDK; nothing here imports ``chunkls.lsp``)."""
