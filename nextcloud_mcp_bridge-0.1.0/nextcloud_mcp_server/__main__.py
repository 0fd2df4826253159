"""`python -m nextcloud_mcp_server` is the same as the `nextcloud-mcp-bridge` command."""

from nextcloud_mcp_server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
