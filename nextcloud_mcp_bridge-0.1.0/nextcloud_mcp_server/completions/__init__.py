"""Completions (`completion/complete`) for the arguments people type: calendar ids, note
categories, folder paths, address books, dates. Keyed by argument name (`_sources.SOURCES`), so
every resource template or prompt that names an argument that way is completed; bounded, per
caller, cached for a few seconds, behind the same scopes as the reading tools.

The protocol completes arguments of prompts and resource templates only (`ref/prompt`,
`ref/resource`), not of tools (docs/ADR/0040-completions-and-icons.md).
"""

from __future__ import annotations

from nextcloud_mcp_server.completions._engine import MAX_VALUES, Completer, register
from nextcloud_mcp_server.completions._sources import SOURCES

__all__ = ["MAX_VALUES", "SOURCES", "Completer", "register"]
