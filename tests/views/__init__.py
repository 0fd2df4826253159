"""MCP Apps views: how they are built and shipped, what the server offers, and how they render."""
