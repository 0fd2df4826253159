"""The Forms toolset: its declaration (docs/ADR/0052-toolsets-as-slices.md)."""

from __future__ import annotations

from nextcloud_mcp_server.toolsets._declaration import App, Declaration, Scope

__all__ = ["DECLARATION"]

DECLARATION = Declaration(
    name="forms",
    title="Forms",
    summary="Forms (Forms app): list, read with questions, create with questions, submit, read answers",
    app=App("forms", "Forms"),
    scopes=(
        Scope("forms:read", "See your forms, their questions and the answers to them"),
        Scope("forms:write", "Create forms and submit answers to forms"),
    ),
)
