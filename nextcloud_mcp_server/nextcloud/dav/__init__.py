"""The DAV protocols several toolsets use: DAV XML, WebDAV on the user's files (listing, search),
the file apps' DAV APIs, CalDAV with iCalendar and recurrence, CardDAV with vCard
(docs/ADR/0052-toolsets-as-slices.md). Knows nothing of MCP."""
