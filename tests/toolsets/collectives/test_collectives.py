"""The collectives toolset through the SDK's client against the real Nextclouds with Collectives
(`apps_nextcloud`): on 34 (Collectives 4.5.0) pages are created, read, edited and searched, and
every step is checked through Collectives' own API and the page's file in WebDAV; on 29
(Collectives 2.18.1, no API for other programs) every tool says so and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.toolsets.collectives import tools as collectives_tools
from tests.backends import Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details
from tests.toolsets.collectives.collectives_api import (
    TOO_OLD,
    call,
    collective,
    ocs,
    pages_by_title,
    said,
    settings,
    too_old_for,
)

pytestmark = pytest.mark.integration

TOOLS = {
    "nc_collectives_list_collectives",
    "nc_collectives_list_pages",
    "nc_collectives_get_page",
    "nc_collectives_create_page",
    "nc_collectives_edit_page",
    "nc_collectives_search_pages",
    "nc_collectives_create_collective",
    "nc_collectives_move_page",
    "nc_collectives_trash_page",
    "nc_collectives_restore_page",
}


async def test_pages_are_created_read_edited_and_searched(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            listed = {t.name for t in (await session.list_tools()).tools}
            assert listed == (TOOLS if nextcloud.major >= 30 else set())  # never offered where it cannot work
            if nextcloud.major < 30:
                await _every_tool_says_too_old(nextcloud, session)
                return
            await _the_life_of_a_page(nextcloud, session)
            await _a_new_collective_with_a_moved_and_a_copied_page(nextcloud, session, base)


async def _every_tool_says_too_old(nextcloud: Nextcloud, session: ClientSession) -> None:
    """Nextcloud 29: a clear error naming the version needed, from every tool; nothing made."""
    calls = {
        "nc_collectives_list_collectives": {},
        "nc_collectives_list_pages": {"collective_id": 1},
        "nc_collectives_get_page": {"collective_id": 1, "page_id": 1},
        "nc_collectives_create_page": {"collective_id": 1, "title": "Plan", "content": "x"},
        "nc_collectives_edit_page": {"collective_id": 1, "page_id": 1, "etag": "abc", "content": "x"},
        "nc_collectives_search_pages": {"query": "plan"},
        "nc_collectives_create_collective": {"name": "Handbook"},
        "nc_collectives_move_page": {"collective_id": 1, "page_id": 2, "parent_id": 3},
        "nc_collectives_trash_page": {"collective_id": 1, "page_id": 2},
        "nc_collectives_restore_page": {"collective_id": 1},
    }
    for tool, arguments in calls.items():
        result = await session.call_tool(tool, arguments)
        assert result.is_error, tool
        text = said(result)
        assert TOO_OLD in text, (tool, text)
    assert not nextcloud.exists(nextcloud.alice, "Collectives")
    assert not nextcloud.exists(nextcloud.alice, ".Collectives")


async def _a_new_collective_with_a_moved_and_a_copied_page(
    nextcloud: Nextcloud, session: ClientSession, base: str
) -> None:
    """A collective created, two pages in it, one moved under the other, then copied with its
    subpage under the landing page; a page under itself and the landing page are refused. Each
    step checked through Collectives' own API."""
    made = await call(session, "nc_collectives_create_collective", name="Handbook", emoji="📘")
    collective = made["id"]
    stored = {c["id"]: c for c in ocs(nextcloud, nextcloud.alice, "GET", "")["collectives"]}
    assert (stored[collective]["name"], stored[collective]["emoji"]) == ("Handbook", "📘")
    landing = made["landing_page_id"]
    roots = [p["id"] for p in pages_by_title(nextcloud, collective).values() if p["parentId"] == 0]
    assert roots == [landing]
    on = {"collective_id": collective}
    onboarding = await call(session, "nc_collectives_create_page", **on, title="Onboarding")
    tools = await call(session, "nc_collectives_create_page", **on, title="Tools", content="# Tools")
    moved = await call(
        session, "nc_collectives_move_page", **on, page_id=tools["id"], parent_id=onboarding["id"]
    )
    assert (moved["id"], moved["parent_id"], moved["copied"]) == (tools["id"], onboarding["id"], False)
    pages = pages_by_title(nextcloud, collective)
    assert pages["Tools"]["parentId"] == onboarding["id"]
    file = "/".join(
        pages["Tools"][k] for k in ("collectivePath", "filePath", "fileName") if pages["Tools"][k]
    )
    assert file.endswith("Handbook/Onboarding/Tools.md")
    assert nextcloud.read_file(nextcloud.alice, file) == b"# Tools"
    copied = await call(
        session,
        "nc_collectives_move_page",
        **on,
        page_id=onboarding["id"],
        parent_id=landing,
        copy=True,
        title="Onboarding (old)",
    )
    pages = pages_by_title(nextcloud, collective)
    assert copied["id"] != onboarding["id"]
    assert (pages["Onboarding (old)"]["id"], pages["Onboarding (old)"]["parentId"]) == (copied["id"], landing)
    listed = _pages_listed(nextcloud, collective)
    assert sorted(p["title"] for p in listed if p["parentId"] == copied["id"]) == ["Tools"]
    assert pages["Onboarding"]["parentId"] == landing  # the original stays
    under = await session.call_tool(
        "nc_collectives_move_page", {**on, "page_id": onboarding["id"], "parent_id": tools["id"]}
    )
    assert under.is_error
    assert "a page cannot go under itself" in said(under)
    top = await session.call_tool(
        "nc_collectives_move_page", {**on, "page_id": landing, "parent_id": onboarding["id"]}
    )
    assert "the landing page cannot be moved" in said(top)
    by_id = {p["id"]: p for p in _pages_listed(nextcloud, collective)}
    assert (by_id[tools["id"]]["parentId"], by_id[landing]["parentId"]) == (onboarding["id"], 0)

    # the copy to the trash: asked; a page added below it while asked voids the approval
    human = Human()

    async def added_below() -> None:
        ocs(nextcloud, nextcloud.alice, "POST", f"/{collective}/pages/{copied['id']}", title="Late")

    human.while_asked = added_below
    async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as asking:
        raced = await asking.call_tool("nc_collectives_trash_page", {**on, "page_id": copied["id"]})
        assert "changed while you were being asked" in said(raced)
        assert copied["id"] in {p["id"] for p in _pages_listed(nextcloud, collective)}
        human.while_asked = None
        gone = await call(asking, "nc_collectives_trash_page", **on, page_id=copied["id"])
        assert (gone["trashed"], gone["subpages"]) == (True, 2)
        assert human.questions[-1] == (
            'Move the page "Onboarding (old)" and its 2 subpages to the trash of collective '
            f"{collective}? Every member loses it until it is restored."
        )
    left = {p["id"] for p in _pages_listed(nextcloud, collective)}
    assert copied["id"] not in left
    assert onboarding["id"] in left
    trash = ocs(nextcloud, nextcloud.alice, "GET", f"/{collective}/pages/trash")["pages"]
    assert [p["id"] for p in trash] == [copied["id"]]
    listed = structured(await session.call_tool("nc_collectives_restore_page", on))
    assert [p["id"] for p in listed["result"]] == [copied["id"]]
    back = structured(await session.call_tool("nc_collectives_restore_page", {**on, "page_id": copied["id"]}))
    assert back["result"][0]["trashed"] is False
    restored = {p["id"]: p for p in _pages_listed(nextcloud, collective)}
    assert restored[copied["id"]]["parentId"] == landing
    assert ocs(nextcloud, nextcloud.alice, "GET", f"/{collective}/pages/trash")["pages"] == []
    no_ask = await session.call_tool("nc_collectives_trash_page", {**on, "page_id": tools["id"]})
    assert "this client cannot ask for it" in said(no_ask)  # a client that cannot ask: nothing trashed
    assert tools["id"] in {p["id"] for p in _pages_listed(nextcloud, collective)}


def _pages_listed(nextcloud: Nextcloud, collective_id: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ocs(nextcloud, nextcloud.alice, "GET", f"/{collective_id}/pages")["pages"]
    return found


async def _the_life_of_a_page(nextcloud: Nextcloud, session: ClientSession) -> None:
    alice = nextcloud.alice
    wiki = collective(nextcloud)
    cid = wiki["id"]
    other = collective(nextcloud, "Garden")

    found = await call(session, "nc_collectives_list_collectives")
    assert found["total"] == 2
    assert [(c["name"], c["can_edit"]) for c in found["collectives"]] == [
        ("Garden", True),
        ("Team Wiki", True),
    ]

    meetings = await call(
        session, "nc_collectives_create_page", collective_id=cid, title="Meetings", content="# Meetings\n"
    )
    assert (meetings["title"], meetings["parent_id"]) == ("Meetings", wiki["landing"]["id"])
    assert nextcloud.read_file(alice, ".Collectives/Team Wiki/Meetings.md") == b"# Meetings\n"
    weekly = await call(
        session,
        "nc_collectives_create_page",
        collective_id=cid,
        title="Weekly/Sync",
        parent_id=meetings["id"],
        content="Agenda: budget and the Ünïcode roadmap",
    )
    assert weekly["title"] == "Weekly-Sync"
    assert "Weekly-Sync" in weekly["notice"]
    # Collectives' own API sees the tree; the parent became a folder with a Readme.md
    pages = pages_by_title(nextcloud, cid)
    assert pages["Weekly-Sync"]["parentId"] == meetings["id"]
    assert nextcloud.read_file(alice, ".Collectives/Team Wiki/Meetings/Readme.md") == b"# Meetings\n"

    tree = await call(session, "nc_collectives_list_pages", collective_id=cid)
    assert [(p["title"], p["depth"]) for p in tree["pages"]] == [
        ("Landing page", 0),
        ("Meetings", 1),
        ("Weekly-Sync", 2),
    ]
    assert tree["total"] == 3
    subtree = await call(
        session, "nc_collectives_list_pages", collective_id=cid, under=meetings["id"], limit=1
    )
    assert [p["title"] for p in subtree["pages"]] == ["Meetings"]
    assert subtree["total"] == 2

    read = await call(session, "nc_collectives_get_page", collective_id=cid, page_id=weekly["id"])
    assert read["content"] == "Agenda: budget and the Ünïcode roadmap"
    assert read["etag"] == nextcloud.etag(alice, ".Collectives/Team Wiki/Meetings/Weekly-Sync.md")
    assert read["truncated"] is False

    edited = await call(
        session,
        "nc_collectives_edit_page",
        collective_id=cid,
        page_id=weekly["id"],
        etag=read["etag"],
        content="Agenda: budget, hiring and the Ünïcode roadmap",
    )
    # (not "!= read['etag']": Nextcloud keeps a file's ETag when it is replaced within the same
    # second, see tests/backends.py put_new_version; what counts is that the answer is current)
    path = ".Collectives/Team Wiki/Meetings/Weekly-Sync.md"
    assert nextcloud.read_file(alice, path) == "Agenda: budget, hiring and the Ünïcode roadmap".encode()
    assert edited["etag"] == nextcloud.etag(alice, path)

    # another device edits; the old etag is refused and the current page comes back
    nextcloud.put_new_version(alice, path, b"Agenda: phone edit")
    stale = await session.call_tool(
        "nc_collectives_edit_page",
        {"collective_id": cid, "page_id": weekly["id"], "etag": edited["etag"], "content": "overwrite!"},
    )
    conflict = refusal_details(stale)
    assert conflict["error"] == "conflict"
    assert conflict["current_page"]["content"] == "Agenda: phone edit"
    assert "nothing was overwritten" in said(stale)
    assert nextcloud.read_file(alice, path) == b"Agenda: phone edit"

    garden = await call(
        session,
        "nc_collectives_create_page",
        collective_id=other["id"],
        title="Roses",
        content="Prune the PHONE",
    )
    hits = await call(session, "nc_collectives_search_pages", query="phone")
    assert {(h["title"], h["matched_in"]) for h in hits["hits"]} == {
        ("Weekly-Sync", "content"),
        ("Roses", "content"),
    }
    assert hits["complete"] is True
    assert hits["searched_pages"] == 5
    only = await call(session, "nc_collectives_search_pages", query="MEETINGS", collective_id=cid)
    assert [(h["title"], h["matched_in"]) for h in only["hits"]] == [("Meetings", "title")]
    assert garden["collective_id"] == other["id"]

    # ids that are not there, or in no collective of alice's: Collectives' own words
    missing = await session.call_tool("nc_collectives_get_page", {"collective_id": cid, "page_id": 999999})
    assert missing.is_error
    assert "File not found" in said(missing)
    foreign = await session.call_tool("nc_collectives_list_pages", {"collective_id": 424242})
    assert foreign.is_error
    assert "Collective not found" in said(foreign)
    # the admin's own collective is neither listed nor readable for alice
    admins: dict[str, Any] = ocs(nextcloud, nextcloud.admin, "POST", "", name="Board")["collective"]
    [board_landing] = ocs(nextcloud, nextcloud.admin, "GET", f"/{admins['id']}/pages")["pages"]
    listed = await call(session, "nc_collectives_list_collectives")
    assert "Board" not in [c["name"] for c in listed["collectives"]]
    for tool, arguments in [
        ("nc_collectives_list_pages", {"collective_id": admins["id"]}),
        ("nc_collectives_get_page", {"collective_id": admins["id"], "page_id": board_landing["id"]}),
        ("nc_collectives_get_page", {"collective_id": cid, "page_id": board_landing["id"]}),
        ("nc_collectives_create_page", {"collective_id": admins["id"], "title": "Mine now"}),
    ]:
        result = await session.call_tool(tool, arguments)
        assert result.is_error, (tool, said(result))
        assert "not found" in said(result), said(result)
    assert "Mine now" not in {
        p["title"] for p in ocs(nextcloud, nextcloud.admin, "GET", f"/{admins['id']}/pages")["pages"]
    }


async def test_emptying_a_page_asks_and_a_refusal_changes_nothing(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    if nextcloud.major < 30:
        await too_old_for(nextcloud)
        return
    wiki = collective(nextcloud)
    page = ocs(
        nextcloud, nextcloud.alice, "POST", f"/{wiki['id']}/pages/{wiki['landing']['id']}", title="Plan"
    )
    path = ".Collectives/Team Wiki/Plan.md"
    nextcloud.put_file(nextcloud.alice, path, b"a long plan " * 20)
    arguments = {"collective_id": wiki["id"], "page_id": page["page"]["id"], "content": "x"}
    human = Human(approve=False)
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            arguments["etag"] = nextcloud.etag(nextcloud.alice, path)
            declined = await session.call_tool("nc_collectives_edit_page", arguments)
            assert declined.is_error
            assert nextcloud.read_file(nextcloud.alice, path) == b"a long plan " * 20
            [question] = human.questions
            assert question == 'Replace the text of the page "Plan" (240 characters) with 1 character?'
            human.approve = True
            done = await call(session, "nc_collectives_edit_page", **arguments)
    assert nextcloud.read_file(nextcloud.alice, path) == b"x"
    assert done["content"] == "x"
    with running_app(settings(nextcloud, nextcloud_mcp_permissions="write")) as base:
        async with http_session(f"{base}/mcp") as session:
            nextcloud.put_new_version(nextcloud.alice, path, b"a long plan " * 20)
            arguments["etag"] = nextcloud.etag(nextcloud.alice, path)
            refused = await session.call_tool("nc_collectives_edit_page", arguments)
    assert refused.is_error
    assert nextcloud.read_file(nextcloud.alice, path) == b"a long plan " * 20


async def test_long_pages_are_cut_and_a_search_says_what_it_read(
    apps_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """get_page returns at most READ_BYTES and says so; a search reads at most SCAN_PAGES pages
    (the newest) and says it matched the others by title only."""
    nextcloud = apps_nextcloud
    if nextcloud.major < 30:
        await too_old_for(nextcloud)
        return
    monkeypatch.setattr(collectives_tools, "READ_BYTES", 999)
    monkeypatch.setattr(collectives_tools, "SCAN_PAGES", 2)
    wiki = collective(nextcloud)
    cid, landing = wiki["id"], wiki["landing"]["id"]
    made = [
        ocs(nextcloud, nextcloud.alice, "POST", f"/{cid}/pages/{landing}", title=t)["page"] for t in "ABC"
    ]
    long_text = ("é" * 999 + "\n").encode() * 3  # 5997 bytes; byte 999 is inside an é
    # A changed last in 2001, B and C now: a search reads B and C, not A
    for title, text, mtime in (
        ("A", long_text + b"needle", "1000000000"),
        ("B", b"hay", None),
        ("C", b"hay", None),
    ):
        path = nextcloud.dav_path(nextcloud.alice, f".Collectives/Team Wiki/{title}.md")
        with nextcloud.http(nextcloud.alice) as http:
            http.put(path, content=text, headers={"X-OC-MTime": mtime} if mtime else {}).raise_for_status()
    assert pages_by_title(nextcloud, cid)["A"]["timestamp"] == 1000000000
    with running_app(settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            page = await call(session, "nc_collectives_get_page", collective_id=cid, page_id=made[0]["id"])
            found = await call(session, "nc_collectives_search_pages", query="needle", collective_id=cid)
            titled = await call(session, "nc_collectives_search_pages", query="a", collective_id=cid)
    assert page["truncated"] is True
    assert page["size"] == len(long_text) + 6
    assert page["content"] == "é" * 499  # whole characters only, at most 999 bytes
    assert found == {
        "hits": [],
        "searched_pages": 4,
        "read_pages": 2,
        "complete": False,
        "answered_from": "nextcloud",
    }
    assert titled["read_pages"] == 2
    assert ("A", "title") in {(h["title"], h["matched_in"]) for h in titled["hits"]}
