"""MCP Apps views: `ui://` resources a host renders beside a tool's result (docs/ADR/0041).

Each view is one self-contained HTML file shipped in this package (`agenda.html`,
`approval.html`), built from `views/src` by `make views` with the ext-apps App bridge inlined; no
build happens at run time. A tool links its view in `tools/list` through `_meta.ui.resourceUri`
(`ui_meta`); the tool's results stay exactly what they are for hosts without UI support.

The views reach nothing outside the host: the resource's `_meta.ui.csp` names no domain, and the
HTML's own Content-Security-Policy allows only its one inline script and style (by hash). They hold
no secrets: what they show comes from the tool's input and result, and from this server's read
tools they call through the host with the caller's own access.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import FunctionResource

from nextcloud_mcp_server.icons import SERVER, icons_for

__all__ = ["AGENDA", "APPROVAL", "MIME_TYPE", "VIEWS", "View", "html", "register_views", "ui_meta"]

MIME_TYPE = "text/html;profile=mcp-app"  # what MCP Apps hosts render (ext-apps RESOURCE_MIME_TYPE)
AGENDA = "ui://nextcloud/agenda.html"
APPROVAL = "ui://nextcloud/approval.html"
# No origin at all: no fetch, no images, scripts, styles or frames from anywhere.
NO_DOMAINS: dict[str, list[str]] = {
    "connectDomains": [],
    "resourceDomains": [],
    "frameDomains": [],
    "baseUriDomains": [],
}


@dataclass(frozen=True)
class View:
    uri: str
    file: str
    title: str
    description: str
    icon: str  # whose icons it shows: a toolset's, or the server's


VIEWS = (
    View(
        AGENDA,
        "agenda.html",
        "Agenda",
        "The events of nc_calendar_list_events by day, and the free slots of "
        "nc_calendar_find_availability among the busy events.",
        "calendar",
    ),
    View(
        APPROVAL,
        "approval.html",
        "Approval preview",
        "Beside every approval question, what it is about: what a delete, an overwrite, a share, a "
        "post or a restore would remove, replace or publish.",
        SERVER,
    ),
)


def ui_meta(uri: str) -> dict[str, Any]:
    """A tool's `_meta` entries linking its view (the flat key is the older hosts' spelling)."""
    return {"ui": {"resourceUri": uri}, "ui/resourceUri": uri}


def html(view: View) -> str:
    return resources.files(__name__).joinpath(view.file).read_text(encoding="utf-8")


def _resource(view: View) -> FunctionResource:
    """The view as a resource whose HTML (400 KB each) is read when a host first asks for it,
    not at start (docs/ADR/0093)."""
    return FunctionResource(
        uri=view.uri,
        name=view.file.removesuffix(".html"),
        title=view.title,
        description=view.description,
        mime_type=MIME_TYPE,
        icons=list(icons_for(view.icon)),
        fn=functools.partial(html, view),
        meta={"ui": {"csp": NO_DOMAINS, "prefersBorder": True}},
    )


def register_views(server: MCPServer[Any], linked: Iterable[str | None]) -> None:
    """Add the views the enabled tools link to (`linked`: each tool's view URI, or None)."""
    wanted = set(linked)
    for view in VIEWS:
        if view.uri in wanted:
            server.add_resource(_resource(view))
