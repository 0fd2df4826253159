"""The Mail toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md, docs/ADR/0074)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="mail",
    title="Mail",
    summary="Your mail in the Mail app: mailboxes, search and read messages, drafts; sending asks first",
    app=App("mail", "Mail", nextcloud_from=30),  # Mail 3 (29) has no API but its web page's
    scopes=(
        Scope("mail:read", "Read and search your email in the Mail app"),
        Scope("mail:write", "Save drafts and send email in your name (each email asks you first)"),
    ),
)
