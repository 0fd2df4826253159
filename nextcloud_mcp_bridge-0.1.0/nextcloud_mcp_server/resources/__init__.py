"""MCP resources: the user's notes, files, calendar days and weeks, and contacts, read by
`nextcloud://` URI, behind the same scopes, consent and limits as the read tools
(docs/ADR/0039-resources.md). Resources only read, so they are offered at every permission level.

The templates, for completions of their parts: `KINDS` (each with `uri_template`, `scope` and the
names of its parts in `parsed.variable_names`).
"""

from __future__ import annotations

from nextcloud_mcp_server.resources._kinds import KINDS, ResourceKind
from nextcloud_mcp_server.resources._middleware import resource_scopes, resources_for, serve_resources
from nextcloud_mcp_server.resources._uris import (
    CALENDAR_TEMPLATE,
    CONTACT_TEMPLATE,
    FILE_TEMPLATE,
    NOTE_TEMPLATE,
    ONE_CALENDAR_TEMPLATE,
    calendar_uri,
    contact_uri,
    file_uri,
    note_uri,
)

__all__ = [
    "CALENDAR_TEMPLATE",
    "CONTACT_TEMPLATE",
    "FILE_TEMPLATE",
    "KINDS",
    "NOTE_TEMPLATE",
    "ONE_CALENDAR_TEMPLATE",
    "ResourceKind",
    "calendar_uri",
    "contact_uri",
    "file_uri",
    "note_uri",
    "resource_scopes",
    "resources_for",
    "serve_resources",
]
