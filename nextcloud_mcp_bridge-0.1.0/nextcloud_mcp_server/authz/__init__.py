"""This server as its own OAuth authorization server (AUTH_SERVER_ENABLED; docs/ADR/0025).

Knows OAuth and the store; knows nothing of notes, files or calendars."""
