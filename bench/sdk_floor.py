"""The SDK floor: a bare MCP server on this SDK that gives this server's answers to the tool-call mix.

A bare `MCPServer` with the three tools of `tool_calls.py`'s mix under this server's names and
arguments. Each makes the same Nextcloud request as the direct-HTTP floor, with this server's own
HTTP client (`NextcloudHTTP`, the cheapest one measured here: httpx 0.28 cost about 0.8 ms more
of server CPU per call), and returns the same answer this server returns: its output models, its
output schemas (`plain`), its compact JSON text (`answer`), one JSON body per call
(`json_response`). It has none of the rest of this server: no input checks, no guards or limits
in front, no error handling, no checks of Nextcloud's answers. The MCP client pays exactly what it
pays for this server (same bytes, same schema validation); what this server costs above this
floor is its own, and what the floor costs above direct HTTP is the SDK's.

    NEXTCLOUD_HOST=... NEXTCLOUD_USERNAME=... NEXTCLOUD_PASSWORD=... python bench/sdk_floor.py PORT
"""

from __future__ import annotations

import functools
import os
import sys
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.webdav import PROPFIND_BODY
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.tools._output_schema import published_input, published_output
from nextcloud_mcp_server.tools._results import answer
from nextcloud_mcp_server.toolsets.files.tools import DirectoryListing, FileInfo
from nextcloud_mcp_server.toolsets.notes.tools import NoteDetail, NoteList, NoteSummary, _iso

NOTES = "/index.php/apps/notes/api/v1/notes"
JSON = {"Accept": "application/json"}
PROPFIND = {"Depth": "1", "Content-Type": "application/xml; charset=utf-8"}
DAV = "{DAV:}"


def answered(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[CallToolResult]]:
    """The model a tool returns, as this server answers it (structured content + compact text)."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> CallToolResult:
        return answer(await fn(*args, **kwargs))

    return call


def _summary(note: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "title", "category", "favorite")
    return {**{k: note[k] for k in keys}, "modified": _iso(note["modified"])}


def _entry(response: ET.Element, root: str) -> FileInfo:
    href = unquote(response.findtext(f"{DAV}href") or "")
    path = href.split(root, 1)[-1].rstrip("/") or "/"
    prop = response.find(f"{DAV}propstat/{DAV}prop")
    assert prop is not None
    folder = prop.find(f"{DAV}resourcetype/{DAV}collection") is not None
    modified = prop.findtext(f"{DAV}getlastmodified")
    # oc:size: a file's length (what the listing asks for since ADR 0051), else getcontentlength
    size = prop.findtext("{http://owncloud.org/ns}size") or prop.findtext(f"{DAV}getcontentlength")
    return FileInfo(
        path=path,
        name=path.rsplit("/", 1)[-1],
        type="directory" if folder else "file",
        size=int(size) if size else None,
        modified=parsedate_to_datetime(modified).strftime("%Y-%m-%dT%H:%M:%SZ") if modified else None,
        etag=(prop.findtext(f"{DAV}getetag") or "").strip('"') or None,
        mime=None if folder else prop.findtext(f"{DAV}getcontenttype"),
    )


def build(nextcloud: str, user: str, password: str) -> MCPServer[Any]:
    """The floor for one Nextcloud user."""
    http = NextcloudHTTP(nextcloud)
    credential = BasicCredential(user, password)
    root = f"/remote.php/dav/files/{user}"

    async def nc_notes_list_notes(limit: int = 100, offset: int = 0) -> NoteList:
        """List notes, newest first."""
        params = {"chunkSize": 200, "exclude": "content"}
        response = await http.request("GET", NOTES, credential=credential, params=params, headers=JSON)
        notes = sorted(response.json(), key=lambda n: (-n["modified"], n["id"]))
        page = [NoteSummary(**_summary(n)) for n in notes[offset : offset + limit]]
        return NoteList(notes=page, total=len(notes))

    async def nc_notes_get_note(note_id: int) -> NoteDetail:
        """Get one note."""
        note = (await http.request("GET", f"{NOTES}/{note_id}", credential=credential, headers=JSON)).json()
        return NoteDetail(**_summary(note), content=note["content"], etag=note["etag"])

    async def nc_webdav_list_directory(
        path: str = "/", limit: int = 200, offset: int = 0
    ) -> DirectoryListing:
        """List a folder."""
        folder = "/" + path.strip("/")
        url = f"{root}{quote(folder.rstrip('/'))}/"
        body = PROPFIND_BODY.encode()
        response = await http.request("PROPFIND", url, credential=credential, headers=PROPFIND, content=body)
        # the double's answer, trusted here (this server parses it with bounds: dav_xml.py)
        found = ET.fromstring(response.content).iter(f"{DAV}response")  # noqa: S314
        entries = [e for e in (_entry(r, root) for r in found) if e.path != folder]
        entries.sort(key=lambda e: (e.type != "directory", e.name.casefold(), e.name))
        return DirectoryListing(path=folder, entries=entries[offset : offset + limit], total=len(entries))

    tools = []
    for fn in (nc_notes_list_notes, nc_notes_get_note, nc_webdav_list_directory):
        tool = Tool.from_function(answered(fn), name=fn.__name__)
        tool.parameters = published_input(tool.parameters)  # what this server does to its schemas
        if tool.fn_metadata.output_schema is not None:
            tool.fn_metadata.output_schema = published_output(tool.fn_metadata.output_schema)
        tools.append(tool)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await http.aclose()

    return MCPServer("sdk-floor", tools=tools, lifespan=lifespan)


if __name__ == "__main__":
    env = os.environ
    floor = build(env["NEXTCLOUD_HOST"], env["NEXTCLOUD_USERNAME"], env["NEXTCLOUD_PASSWORD"])
    floor.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), json_response=True)
