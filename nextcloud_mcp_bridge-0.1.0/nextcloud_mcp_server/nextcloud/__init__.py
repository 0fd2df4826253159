"""An async Nextcloud client (Notes, OCS, WebDAV, CalDAV). It knows nothing of MCP.

Modules are imported on first use: `nextcloud_mcp_server.nextcloud.client.NextcloudClient` is the
entry point; `errors` holds the exception types; `models` the typed results.
"""
