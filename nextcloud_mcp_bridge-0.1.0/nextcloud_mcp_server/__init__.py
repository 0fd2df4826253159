"""An MCP server for Nextcloud: notes, calendar and files, with progressive consent."""

__version__ = "0.1.0"
# The distribution's name (ADR 0022): what people install and run, and how this server names
# itself to Nextcloud (User-Agent) and to MCP clients.
DISTRIBUTION = "nextcloud-mcp-bridge"

__all__ = ["DISTRIBUTION", "__version__"]
