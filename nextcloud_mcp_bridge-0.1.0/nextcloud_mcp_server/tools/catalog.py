"""The tool list as Markdown, generated from the registry (README's table comes from here)."""

from __future__ import annotations

from nextcloud_mcp_server.tools._registry import ToolSpec

__all__ = ["markdown_table"]


def _kind(spec: ToolSpec) -> str:
    if spec.read_only:
        return "read"
    return "destructive" if spec.destructive else "write"


def markdown_table(specs: list[ToolSpec]) -> str:
    """One row per tool: name, what it does (first sentence), scopes, and the lowest
    NEXTCLOUD_MCP_PERMISSIONS level that offers it."""
    rows = ["| tool | what it does | scopes | level |", "|---|---|---|---|"]
    for spec in specs:
        summary = " ".join(spec.description.split()).split(". ")[0].rstrip(".")
        scopes = " ".join(f"`{s}`" for s in spec.scopes)
        rows.append(f"| `{spec.name}` | {summary} | {scopes} | {_kind(spec)} |")
    return "\n".join(rows)
