"""The find index: the words of a person's notes and files, kept per user (docs/ADR/0071).

Knows nothing of MCP; uses the Nextcloud client to read what changed (`sync.py`) and the store's
PostgreSQL pool and migrations when the index lives in PostgreSQL.
"""
