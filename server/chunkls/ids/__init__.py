"""Where chunk IDs are written in text, and LSP positions."""
