"""Requests this process makes to others: Nextcloud, the identity provider, client ID metadata
documents. One bounded layer over aiohttp (ADR 0035) that knows nothing of what it carries."""
