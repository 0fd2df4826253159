"""An MCP server for Nextcloud: notes, calendar and files, with progressive consent."""

__version__ = "0.1.0"

__all__ = ["__version__"]
