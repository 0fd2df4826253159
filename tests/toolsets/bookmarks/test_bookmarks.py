"""The Bookmarks toolset end to end: the SDK's client, the server, and the real Bookmarks 14.2.7
(Nextcloud 29) and 16.2.6 (Nextcloud 34); every change is checked through Bookmarks' own API. The
links it accepts are checked without a Nextcloud."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.toolsets.bookmarks import tools as bookmark_tools
from nextcloud_mcp_server.toolsets.bookmarks.client import Folder
from nextcloud_mcp_server.toolsets.bookmarks.tools import checked_url
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details

API = "/index.php/apps/bookmarks/public/rest/v2"
TOOLS = {
    "nc_bookmarks_list_bookmarks": ("bookmarks:read", True, False),
    "nc_bookmarks_list_folders": ("bookmarks:read", True, False),
    "nc_bookmarks_add_bookmark": ("bookmarks:write", False, False),
    "nc_bookmarks_update_bookmark": ("bookmarks:write", False, False),
    "nc_bookmarks_delete_bookmark": ("bookmarks:write", False, True),
}


def _api(nextcloud: Nextcloud, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    with nextcloud.http(nextcloud.alice) as http:
        got = http.request(method, f"{API}{path}", json=body, headers={"Accept": "application/json"})
    return got.status_code, got.json()


def _text(result: Any) -> str:
    return str(result.content[0].text)


@asynccontextmanager
async def _session(nextcloud: Nextcloud, human: Human) -> AsyncIterator[ClientSession]:
    config = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets="bookmarks")
    with running_app(config) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            yield session


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https:///no-host",
        "https://exa mple.com",
        "https://example.com/\u202egnp.exe",
        "ftp://example.com/x",
    ],
)
def test_only_plain_web_links_are_taken(url: str) -> None:
    with pytest.raises(InvalidInput):
        checked_url(url)


def test_a_web_link_is_taken_as_given() -> None:
    assert checked_url(" https://example.com/a?b=c ") == "https://example.com/a?b=c"


async def test_add_find_change_and_delete_a_bookmark(apps_nextcloud: Nextcloud) -> None:
    """The five tools with their scopes; a bookmark added with tags into a folder is stored so,
    found by word, tag and folder; a second add of the link is refused (the app would overwrite
    it); a stale version writes nothing; the delete asks, naming the bookmark."""
    nc = apps_nextcloud
    status, made = _api(nc, "POST", "/folder", {"title": "Cooking", "parent_folder": -1})
    assert status == 200
    folder = made["item"]["id"]
    human = Human()
    async with _session(nc, human) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == set(TOOLS)
        for name, (scope, read_only, destructive) in TOOLS.items():
            assert tools[name].meta is not None
            assert tools[name].meta["nextcloud-mcp/scopes"] == [scope]
            assert tools[name].annotations is not None
            assert (tools[name].annotations.read_only_hint, tools[name].annotations.destructive_hint) == (
                read_only,
                destructive,
            )

        listed = structured(await session.call_tool("nc_bookmarks_list_folders", {}))
        assert {"id": folder, "path": "Cooking"} in listed["folders"]
        added = structured(
            await session.call_tool(
                "nc_bookmarks_add_bookmark",
                {
                    "url": "https://example.com/pancakes",
                    "title": "Pancakes",
                    "tags": ["food", "breakfast"],
                    "folder_id": folder,
                },
            )
        )
        status, stored = _api(nc, "GET", f"/bookmark/{added['id']}")
        assert status == 200
        assert (stored["item"]["title"], sorted(stored["item"]["tags"]), stored["item"]["folders"]) == (
            "Pancakes",
            ["breakfast", "food"],
            [folder],
        )
        again = await session.call_tool(
            "nc_bookmarks_add_bookmark", {"url": "https://example.com/pancakes", "title": "Other"}
        )
        assert again.is_error
        assert f"already bookmarked (id {added['id']})" in _text(again)
        assert _api(nc, "GET", f"/bookmark/{added['id']}")[1]["item"]["title"] == "Pancakes"

        for query in ({"words": ["pancakes"]}, {"tags": ["food"]}, {"folder_id": folder}):
            found = structured(await session.call_tool("nc_bookmarks_list_bookmarks", query))
            assert [b["id"] for b in found["bookmarks"]] == [added["id"]], query
        assert (
            structured(await session.call_tool("nc_bookmarks_list_bookmarks", {"tags": ["cars"]}))[
                "bookmarks"
            ]
            == []
        )

        changed = structured(
            await session.call_tool(
                "nc_bookmarks_update_bookmark",
                {"bookmark_id": added["id"], "version": added["version"], "tags": ["food"]},
            )
        )
        assert changed["tags"] == ["food"]
        item = _api(nc, "GET", f"/bookmark/{added['id']}")[1]["item"]
        assert (item["tags"], item["title"], item["folders"]) == (["food"], "Pancakes", [folder])
        stale = await session.call_tool(
            "nc_bookmarks_update_bookmark",
            {"bookmark_id": added["id"], "version": added["version"], "title": "Crepes"},
        )
        assert refusal_details(stale)["error"] == "conflict"
        assert _api(nc, "GET", f"/bookmark/{added['id']}")[1]["item"]["title"] == "Pancakes"

        human.approve = False
        declined = await session.call_tool("nc_bookmarks_delete_bookmark", {"bookmark_id": added["id"]})
        assert declined.is_error
        assert '"Pancakes"' in human.questions[-1]
        assert "https://example.com/pancakes" in human.questions[-1]
        assert _api(nc, "GET", f"/bookmark/{added['id']}")[0] == 200
        human.approve = True
        structured(await session.call_tool("nc_bookmarks_delete_bookmark", {"bookmark_id": added["id"]}))
        assert _api(nc, "GET", f"/bookmark/{added['id']}")[0] == 404
        gone = await session.call_tool("nc_bookmarks_delete_bookmark", {"bookmark_id": added["id"]})
        assert f"bookmark {added['id']} does not exist" in _text(gone)


async def test_a_listed_version_of_a_bookmark_with_a_comma_in_a_tag_updates_it(
    apps_nextcloud: Nextcloud,
) -> None:
    """The app's list splits the tag "a,b" in two, its single read does not: a version read from
    the list never matched, and every update was refused as changed since."""
    nc = apps_nextcloud
    status, made = _api(nc, "POST", "/bookmark", {"url": "https://example.com/commas", "tags": ["a,b"]})
    assert status == 200, made
    async with _session(nc, Human()) as session:
        listed = structured(await session.call_tool("nc_bookmarks_list_bookmarks", {"words": ["commas"]}))
        [found] = listed["bookmarks"]
        changed = await session.call_tool(
            "nc_bookmarks_update_bookmark",
            {"bookmark_id": found["id"], "version": found["version"], "title": "Commas"},
        )
    assert not changed.is_error, _text(changed)
    assert _api(nc, "GET", f"/bookmark/{found['id']}")[1]["item"]["title"] == "Commas"


def test_folder_paths_are_cut_as_they_are_made_and_only_shown_ones_are_kept() -> None:
    """A 200 KB title above 3,000 children held 600 MB of uncut paths before."""
    children = [Folder(id=n, title=f"child {n}") for n in range(3_000)]
    wide = Folder(id=1, title="t" * 200_000, children=children)
    nested = Folder(id=2, title="a", children=[Folder(id=3, title="b", children=[Folder(id=4, title="c")])])
    tracemalloc.start()
    try:
        shown = bookmark_tools._paths([nested, wide])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [f.path for f in shown[:4]] == ["a", "a/b", "a/b/c", "t" * 1_000]
    assert len(shown) == bookmark_tools.MAX_FOLDERS
    assert all(len(f.path) <= 1_000 for f in shown)
    assert peak < 10 * 1024 * 1024, peak
