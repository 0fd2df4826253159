"""The files toolset over MCP against both Nextclouds: the double (WsgiDAV) and the real 29.0.6.

State is checked through WebDAV (tests/backends.py), never on the double's disk, so every check
means the same on both."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.types import BlobResourceContents, EmbeddedResource

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudHTTPError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.nextcloud_double import NextcloudDouble

pytestmark = pytest.mark.integration

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@asynccontextmanager
async def _serving(nextcloud: Nextcloud, **overrides: Any) -> AsyncIterator[str]:
    """This server in front of `nextcloud` as admin; yields its MCP endpoint."""
    with running_app(nextcloud.settings(**overrides)) as base:
        yield f"{base}/mcp"


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def test_a_files_session_from_folder_to_search_to_delete(nextcloud: Nextcloud) -> None:
    """Every files tool in one realistic session; Nextcloud's WebDAV is checked as we go."""
    admin = nextcloud.admin
    name = "Projects/2026/plan notes é#?.md"
    human = Human()
    async with (
        _serving(nextcloud) as mcp_url,
        http_session(mcp_url, elicitation_callback=human.answer) as session,
    ):
        made = structured(
            await session.call_tool("nc_webdav_create_directory", {"path": "Projects/2026", "parents": True})
        )
        assert made == {"path": "/Projects/2026", "type": "directory"}
        assert nextcloud.exists(admin, "Projects/2026")

        written = structured(
            await session.call_tool("nc_webdav_write_file", {"path": name, "content": "# Plan\n"})
        )
        assert written["created"] is True
        assert nextcloud.read_file(admin, name) == b"# Plan\n"

        listed = structured(await session.call_tool("nc_webdav_list_directory", {"path": "Projects/2026"}))
        [entry] = listed["entries"]
        assert (entry["name"], entry["type"], entry["size"]) == ("plan notes é#?.md", "file", 7)
        assert entry["etag"]
        assert entry["mime"].startswith("text/markdown")

        read = await session.call_tool("nc_webdav_read_file", {"path": name})
        assert read.content[1].text == "# Plan\n"  # type: ignore[union-attr]
        assert structured(read)["next_offset"] is None

        again = await session.call_tool("nc_webdav_write_file", {"path": name, "content": "lost?"})
        assert again.is_error
        assert "already exists; pass overwrite=true" in _text(again)
        replaced = structured(
            await session.call_tool(
                "nc_webdav_write_file", {"path": name, "content": "v2", "overwrite": True}
            )
        )
        assert replaced["created"] is False
        assert len(human.questions) == 1, "only replacing an existing file asks"
        assert human.questions[0].startswith(f"Replace the file /{name} (7 bytes, last changed ")
        assert human.questions[0].endswith("with new content (2 bytes)?")
        # Not the etag read before "v2": a real Nextcloud 29 keeps a file's ETag when it is
        # replaced within the same second (webdav_same_second_*.txt), so that one may still
        # be current. Any etag that is not the current one must be refused.
        outdated = "0" * 32 if entry["etag"] != "0" * 32 else "1" * 32
        stale = await session.call_tool(
            "nc_webdav_write_file", {"path": name, "content": "v3", "if_match": outdated}
        )
        assert stale.is_error
        assert "changed since its etag was read" in _text(stale)
        assert nextcloud.read_file(admin, name) == b"v2"

        copied = structured(
            await session.call_tool(
                "nc_webdav_copy_resource", {"source": name, "destination": "Projects/copy.md"}
            )
        )
        assert copied["replaced"] is False
        refused = await session.call_tool(
            "nc_webdav_copy_resource", {"source": name, "destination": "Projects/copy.md"}
        )
        assert refused.is_error
        assert "target exists: /Projects/copy.md" in _text(refused)
        nowhere = await session.call_tool(
            "nc_webdav_move_resource", {"source": "Projects/copy.md", "destination": "Archive/copy.md"}
        )
        assert nowhere.is_error
        assert "the folder /Archive does not exist" in _text(nowhere)
        await session.call_tool("nc_webdav_create_directory", {"path": "Archive"})
        moved = structured(
            await session.call_tool(
                "nc_webdav_move_resource", {"source": "Projects/copy.md", "destination": "Archive/copy.md"}
            )
        )
        assert moved == {"source": "/Projects/copy.md", "destination": "/Archive/copy.md", "replaced": False}
        assert nextcloud.read_file(admin, "Archive/copy.md") == b"v2"
        assert not nextcloud.exists(admin, "Projects/copy.md")

        found = structured(await session.call_tool("nc_webdav_search_files", {"name_pattern": "*.md"}))
        assert sorted(f["path"] for f in found["files"]) == ["/Archive/copy.md", "/" + name]
        later = structured(
            await session.call_tool("nc_webdav_search_files", {"modified_since": "2100-01-01T00:00:00Z"})
        )
        assert later["files"] == []
        ancient = await session.call_tool("nc_webdav_search_files", {"modified_since": "0001-01-01"})
        assert ancient.is_error  # raised ValueError from the search before
        assert "1970" in ancient.content[0].text  # type: ignore[union-attr]

        deleted = structured(await session.call_tool("nc_webdav_delete_resource", {"path": "Projects"}))
        assert deleted == {"path": "/Projects", "type": "directory"}
        assert human.questions[-1].startswith("Delete the folder /Projects with 1 item(s) directly inside")
        assert len(human.questions) == 2
        assert not nextcloud.exists(admin, "Projects")
        gone = await session.call_tool("nc_webdav_read_file", {"path": name})
        assert gone.is_error
        assert "no file or folder at /Projects/2026" in _text(gone)


async def test_binary_files_come_back_as_blob_resources(nextcloud: Nextcloud) -> None:
    """A PNG written as base64 reads back as an embedded blob with its MIME type, byte for byte."""
    encoded = base64.b64encode(PNG).decode()
    async with _serving(nextcloud) as mcp_url, http_session(mcp_url) as session:
        await session.call_tool(
            "nc_webdav_write_file", {"path": "pixel.png", "content": encoded, "encoding": "base64"}
        )
        read = await session.call_tool("nc_webdav_read_file", {"path": "pixel.png"})
    meta = structured(read)
    assert (meta["mime"], meta["encoding"], meta["size"]) == ("image/png", None, len(PNG))
    blob = read.content[1]
    assert isinstance(blob, EmbeddedResource)
    assert isinstance(blob.resource, BlobResourceContents)
    assert blob.resource.mime_type == "image/png"
    assert base64.b64decode(blob.resource.blob) == PNG


async def test_large_text_is_read_in_pages_that_never_split_a_character(nextcloud: Nextcloud) -> None:
    """With a 1001-byte cap per call, a text of two-byte letters is read page by page; joined, the
    pages are the file, and no page ends in half a character."""
    text = "é" * 1500 + "\nend"
    capped = nextcloud.settings(files_max_read_bytes=1001)
    pages = []
    with running_app(capped) as base:
        async with http_session(f"{base}/mcp") as session:
            await session.call_tool("nc_webdav_write_file", {"path": "long.txt", "content": text})
            offset: int | None = 0
            while offset is not None:
                result = await session.call_tool(
                    "nc_webdav_read_file", {"path": "long.txt", "offset": offset}
                )
                meta = structured(result)
                assert meta["length"] <= 1001
                assert meta["offset"] == offset
                pages.append(result.content[1].text)  # type: ignore[union-attr]
                offset = meta["next_offset"]
    assert len(pages) == 4
    assert "".join(pages) == text


async def test_a_folder_listing_is_sorted_and_paged(nextcloud: Nextcloud) -> None:
    for i in range(30):
        nextcloud.put_file(nextcloud.admin, f"many/file-{i:02}.txt", str(i).encode())
    nextcloud.make_folder(nextcloud.admin, "many/zz-sub")
    async with _serving(nextcloud) as mcp_url, http_session(mcp_url) as session:
        page = structured(
            await session.call_tool("nc_webdav_list_directory", {"path": "/many", "limit": 10, "offset": 1})
        )
        assert page["total"] == 31
        assert [e["name"] for e in page["entries"]] == [f"file-{i:02}.txt" for i in range(10)]
        first = structured(await session.call_tool("nc_webdav_list_directory", {"path": "/many", "limit": 1}))
    assert (first["entries"][0]["name"], first["entries"][0]["type"]) == (
        "zz-sub",
        "directory",
    )  # folders first


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "a/%2e%2e/b.txt", "https://evil.example/x", "x\x00y", "a\\b"],
)
async def test_paths_that_could_escape_are_refused_before_any_request(
    mcp_url: str, double: NextcloudDouble, path: str
) -> None:
    """Double only: it records the requests that reached it."""
    async with http_session(mcp_url) as session:
        result = await session.call_tool("nc_webdav_write_file", {"path": path, "content": "x"})
    assert result.is_error
    assert "invalid input" in _text(result)
    assert not [r for r in double.requests if r.method == "PUT"]


name_segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"),
    min_size=1,
    max_size=24,
)


# A batch of names per example, written through one client and listed once: 30 to 50 names in
# 10 examples, in half the requests that one name per example took (each made its client, its
# folder and a listing).
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(name_segment, min_size=3, max_size=5, unique=True))
def test_any_accepted_name_round_trips_through_write_list_and_read(
    nextcloud: Nextcloud, batch: list[str]
) -> None:
    """Arbitrary names (spaces, unicode, #, ?, %) that the path check accepts are written, listed
    and read back unchanged, through WsgiDAV and through the real Nextcloud - or, for a name
    Nextcloud itself forbids (`*` is "a reserved word" on 29; 30+ can forbid more), refused with
    Nextcloud's own reason and nothing written."""
    accepted = {}
    for name in batch:
        with contextlib.suppress(paths.InvalidPath):
            accepted[paths.clean(f"prop/{name}")] = f"content of {name}".encode()
    if not accepted:
        return

    async def round_trip() -> None:
        http = NextcloudHTTP(nextcloud.url)
        try:
            credential = BasicCredential(nextcloud.admin.user, nextcloud.admin.app_password)
            files = await NextcloudClient(http, credential).files()
            written: list[str] = []
            refused: dict[str, NextcloudHTTPError] = {}
            for cleaned, content in accepted.items():
                try:
                    await files.write(cleaned, content, overwrite=True, create_parents=not written)
                except NextcloudHTTPError as exc:
                    refused[cleaned] = exc
                else:
                    written.append(cleaned)
            names = [e.name async for e in files.iter_directory("prop")]
            for cleaned, error in refused.items():
                assert (error.status, nextcloud.kind) == (400, "real"), error  # the double forbids none
                assert "Nextcloud says: " in error.message
                assert cleaned.rpartition("/")[2] not in names
            for cleaned in written:
                assert cleaned.rpartition("/")[2] in names
                page = await files.read(cleaned, length=1024)
                assert page.data == accepted[cleaned]
        finally:
            await http.aclose()

    asyncio.run(round_trip())


async def test_a_search_inside_a_folder_whose_name_needs_escaping(nextcloud: Nextcloud) -> None:
    """Nextcloud takes a SEARCH scope as written, not percent-decoded: a scope of `My%20Folder`
    is "not found" on 29 and 34. Names with a space, an accent, `#`, `%` and `&` are searched."""
    admin = nextcloud.admin
    folder = "Trips & Plans/My Folder é#100%"
    nextcloud.put_file(admin, "Trips & Plans/outside.md", b"x")
    nextcloud.put_file(admin, f"{folder}/inside.md", b"y")
    async with _serving(nextcloud) as mcp_url, http_session(mcp_url) as session:
        found = structured(
            await session.call_tool("nc_webdav_search_files", {"name_pattern": "*.md", "path": folder})
        )
    assert [f["path"] for f in found["files"]] == [f"/{folder}/inside.md"]
