"""The collectives toolset through the SDK's client against the real Nextclouds with Collectives
(`apps_nextcloud`): on 34 (Collectives 4.5.0) pages are created, read, edited and searched, and
every step is checked through Collectives' own API and the page's file in WebDAV; on 29
(Collectives 2.18.1, no API for other programs) every tool says so and changes nothing."""

from __future__ import annotations

import time
from typing import Any, cast

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.nextcloud.errors import InvalidInput, InvalidResponse
from nextcloud_mcp_server.toolsets.collectives import tools as collectives_tools
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesClient, Page
from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, http_session, running_app, structured
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

API = "/ocs/v2.php/apps/collectives/api/v1.0/collectives"
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
TOO_OLD = "needs Nextcloud 30 or later"  # on 29: said by every tool, none of them listed


def _ocs(nextcloud: Nextcloud, login: Login, method: str, path: str, **body: Any) -> Any:
    with nextcloud.http(login) as http:
        answer = http.request(method, f"{API}{path}", params={"format": "json"}, json=body or None)
    answer.raise_for_status()
    return answer.json()["ocs"]["data"]


def _collective(nextcloud: Nextcloud, name: str = "Team Wiki") -> dict[str, Any]:
    """A collective of alice's, made through Collectives' own API, with its landing page."""
    made: dict[str, Any] = _ocs(nextcloud, nextcloud.alice, "POST", "", name=name)["collective"]
    [landing] = _ocs(nextcloud, nextcloud.alice, "GET", f"/{made['id']}/pages")["pages"]
    return {**made, "landing": landing}


def _pages(nextcloud: Nextcloud, collective_id: int) -> dict[str, dict[str, Any]]:
    """Collectives' own view of the pages, by title."""
    return {
        p["title"]: p for p in _ocs(nextcloud, nextcloud.alice, "GET", f"/{collective_id}/pages")["pages"]
    }


async def _call(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool(tool, arguments))


def _settings(nextcloud: Nextcloud, **overrides: Any) -> Any:
    return nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets="collectives", **overrides)


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def test_pages_are_created_read_edited_and_searched(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    with running_app(_settings(nextcloud)) as base:
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
        text = _text(result)
        assert TOO_OLD in text, (tool, text)
    assert not nextcloud.exists(nextcloud.alice, "Collectives")
    assert not nextcloud.exists(nextcloud.alice, ".Collectives")


async def _a_new_collective_with_a_moved_and_a_copied_page(
    nextcloud: Nextcloud, session: ClientSession, base: str
) -> None:
    """A collective created, two pages in it, one moved under the other, then copied with its
    subpage under the landing page; a page under itself and the landing page are refused. Each
    step checked through Collectives' own API."""
    made = await _call(session, "nc_collectives_create_collective", name="Handbook", emoji="📘")
    collective = made["id"]
    stored = {c["id"]: c for c in _ocs(nextcloud, nextcloud.alice, "GET", "")["collectives"]}
    assert (stored[collective]["name"], stored[collective]["emoji"]) == ("Handbook", "📘")
    landing = made["landing_page_id"]
    assert [p["id"] for p in _pages(nextcloud, collective).values() if p["parentId"] == 0] == [landing]
    on = {"collective_id": collective}
    onboarding = await _call(session, "nc_collectives_create_page", **on, title="Onboarding")
    tools = await _call(session, "nc_collectives_create_page", **on, title="Tools", content="# Tools")
    moved = await _call(
        session, "nc_collectives_move_page", **on, page_id=tools["id"], parent_id=onboarding["id"]
    )
    assert (moved["id"], moved["parent_id"], moved["copied"]) == (tools["id"], onboarding["id"], False)
    pages = _pages(nextcloud, collective)
    assert pages["Tools"]["parentId"] == onboarding["id"]
    file = "/".join(
        pages["Tools"][k] for k in ("collectivePath", "filePath", "fileName") if pages["Tools"][k]
    )
    assert file.endswith("Handbook/Onboarding/Tools.md")
    assert nextcloud.read_file(nextcloud.alice, file) == b"# Tools"
    copied = await _call(
        session,
        "nc_collectives_move_page",
        **on,
        page_id=onboarding["id"],
        parent_id=landing,
        copy=True,
        title="Onboarding (old)",
    )
    pages = _pages(nextcloud, collective)
    assert copied["id"] != onboarding["id"]
    assert (pages["Onboarding (old)"]["id"], pages["Onboarding (old)"]["parentId"]) == (copied["id"], landing)
    listed = _pages_listed(nextcloud, collective)
    assert sorted(p["title"] for p in listed if p["parentId"] == copied["id"]) == ["Tools"]
    assert pages["Onboarding"]["parentId"] == landing  # the original stays
    under = await session.call_tool(
        "nc_collectives_move_page", {**on, "page_id": onboarding["id"], "parent_id": tools["id"]}
    )
    assert under.is_error
    assert "a page cannot go under itself" in _text(under)
    top = await session.call_tool(
        "nc_collectives_move_page", {**on, "page_id": landing, "parent_id": onboarding["id"]}
    )
    assert "the landing page cannot be moved" in _text(top)
    by_id = {p["id"]: p for p in _pages_listed(nextcloud, collective)}
    assert (by_id[tools["id"]]["parentId"], by_id[landing]["parentId"]) == (onboarding["id"], 0)

    # the copy to the trash: asked; a page added below it while asked voids the approval
    human = Human()

    async def added_below() -> None:
        _ocs(nextcloud, nextcloud.alice, "POST", f"/{collective}/pages/{copied['id']}", title="Late")

    human.while_asked = added_below
    async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as asking:
        raced = await asking.call_tool("nc_collectives_trash_page", {**on, "page_id": copied["id"]})
        assert "changed while you were being asked" in _text(raced)
        assert copied["id"] in {p["id"] for p in _pages_listed(nextcloud, collective)}
        human.while_asked = None
        gone = await _call(asking, "nc_collectives_trash_page", **on, page_id=copied["id"])
        assert (gone["trashed"], gone["subpages"]) == (True, 2)
        assert human.questions[-1] == (
            'Move the page "Onboarding (old)" and its 2 subpages to the trash of collective '
            f"{collective}? Every member loses it until it is restored."
        )
    left = {p["id"] for p in _pages_listed(nextcloud, collective)}
    assert copied["id"] not in left
    assert onboarding["id"] in left
    trash = _ocs(nextcloud, nextcloud.alice, "GET", f"/{collective}/pages/trash")["pages"]
    assert [p["id"] for p in trash] == [copied["id"]]
    listed = structured(await session.call_tool("nc_collectives_restore_page", on))
    assert [p["id"] for p in listed["result"]] == [copied["id"]]
    back = structured(await session.call_tool("nc_collectives_restore_page", {**on, "page_id": copied["id"]}))
    assert back["result"][0]["trashed"] is False
    restored = {p["id"]: p for p in _pages_listed(nextcloud, collective)}
    assert restored[copied["id"]]["parentId"] == landing
    assert _ocs(nextcloud, nextcloud.alice, "GET", f"/{collective}/pages/trash")["pages"] == []
    no_ask = await session.call_tool("nc_collectives_trash_page", {**on, "page_id": tools["id"]})
    assert "this client cannot ask for it" in _text(no_ask)  # a client that cannot ask: nothing trashed
    assert tools["id"] in {p["id"] for p in _pages_listed(nextcloud, collective)}


def _pages_listed(nextcloud: Nextcloud, collective_id: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = _ocs(nextcloud, nextcloud.alice, "GET", f"/{collective_id}/pages")["pages"]
    return found


async def _the_life_of_a_page(nextcloud: Nextcloud, session: ClientSession) -> None:
    alice = nextcloud.alice
    wiki = _collective(nextcloud)
    cid = wiki["id"]
    other = _collective(nextcloud, "Garden")

    found = await _call(session, "nc_collectives_list_collectives")
    assert found["total"] == 2
    assert [(c["name"], c["can_edit"]) for c in found["collectives"]] == [
        ("Garden", True),
        ("Team Wiki", True),
    ]

    meetings = await _call(
        session, "nc_collectives_create_page", collective_id=cid, title="Meetings", content="# Meetings\n"
    )
    assert (meetings["title"], meetings["parent_id"]) == ("Meetings", wiki["landing"]["id"])
    assert nextcloud.read_file(alice, ".Collectives/Team Wiki/Meetings.md") == b"# Meetings\n"
    weekly = await _call(
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
    pages = _pages(nextcloud, cid)
    assert pages["Weekly-Sync"]["parentId"] == meetings["id"]
    assert nextcloud.read_file(alice, ".Collectives/Team Wiki/Meetings/Readme.md") == b"# Meetings\n"

    tree = await _call(session, "nc_collectives_list_pages", collective_id=cid)
    assert [(p["title"], p["depth"]) for p in tree["pages"]] == [
        ("Landing page", 0),
        ("Meetings", 1),
        ("Weekly-Sync", 2),
    ]
    assert tree["total"] == 3
    subtree = await _call(
        session, "nc_collectives_list_pages", collective_id=cid, under=meetings["id"], limit=1
    )
    assert [p["title"] for p in subtree["pages"]] == ["Meetings"]
    assert subtree["total"] == 2

    read = await _call(session, "nc_collectives_get_page", collective_id=cid, page_id=weekly["id"])
    assert read["content"] == "Agenda: budget and the Ünïcode roadmap"
    assert read["etag"] == nextcloud.etag(alice, ".Collectives/Team Wiki/Meetings/Weekly-Sync.md")
    assert read["truncated"] is False

    edited = await _call(
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
    assert "nothing was overwritten" in _text(stale)
    assert nextcloud.read_file(alice, path) == b"Agenda: phone edit"

    garden = await _call(
        session,
        "nc_collectives_create_page",
        collective_id=other["id"],
        title="Roses",
        content="Prune the PHONE",
    )
    hits = await _call(session, "nc_collectives_search_pages", query="phone")
    assert {(h["title"], h["matched_in"]) for h in hits["hits"]} == {
        ("Weekly-Sync", "content"),
        ("Roses", "content"),
    }
    assert hits["complete"] is True
    assert hits["searched_pages"] == 5
    only = await _call(session, "nc_collectives_search_pages", query="MEETINGS", collective_id=cid)
    assert [(h["title"], h["matched_in"]) for h in only["hits"]] == [("Meetings", "title")]
    assert garden["collective_id"] == other["id"]

    # ids that are not there, or in no collective of alice's: Collectives' own words
    missing = await session.call_tool("nc_collectives_get_page", {"collective_id": cid, "page_id": 999999})
    assert missing.is_error
    assert "File not found" in _text(missing)
    foreign = await session.call_tool("nc_collectives_list_pages", {"collective_id": 424242})
    assert foreign.is_error
    assert "Collective not found" in _text(foreign)
    # the admin's own collective is neither listed nor readable for alice
    admins: dict[str, Any] = _ocs(nextcloud, nextcloud.admin, "POST", "", name="Board")["collective"]
    [board_landing] = _ocs(nextcloud, nextcloud.admin, "GET", f"/{admins['id']}/pages")["pages"]
    listed = await _call(session, "nc_collectives_list_collectives")
    assert "Board" not in [c["name"] for c in listed["collectives"]]
    for tool, arguments in [
        ("nc_collectives_list_pages", {"collective_id": admins["id"]}),
        ("nc_collectives_get_page", {"collective_id": admins["id"], "page_id": board_landing["id"]}),
        ("nc_collectives_get_page", {"collective_id": cid, "page_id": board_landing["id"]}),
        ("nc_collectives_create_page", {"collective_id": admins["id"], "title": "Mine now"}),
    ]:
        result = await session.call_tool(tool, arguments)
        assert result.is_error, (tool, _text(result))
        assert "not found" in _text(result), _text(result)
    assert "Mine now" not in {
        p["title"] for p in _ocs(nextcloud, nextcloud.admin, "GET", f"/{admins['id']}/pages")["pages"]
    }


async def test_emptying_a_page_asks_and_a_refusal_changes_nothing(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    if nextcloud.major < 30:
        await _too_old_for(nextcloud)
        return
    wiki = _collective(nextcloud)
    page = _ocs(
        nextcloud, nextcloud.alice, "POST", f"/{wiki['id']}/pages/{wiki['landing']['id']}", title="Plan"
    )
    path = ".Collectives/Team Wiki/Plan.md"
    nextcloud.put_file(nextcloud.alice, path, b"a long plan " * 20)
    arguments = {"collective_id": wiki["id"], "page_id": page["page"]["id"], "content": "x"}
    human = Human(approve=False)
    with running_app(_settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp", elicitation_callback=human.answer) as session:
            arguments["etag"] = nextcloud.etag(nextcloud.alice, path)
            declined = await session.call_tool("nc_collectives_edit_page", arguments)
            assert declined.is_error
            assert nextcloud.read_file(nextcloud.alice, path) == b"a long plan " * 20
            [question] = human.questions
            assert question == 'Replace the text of the page "Plan" (240 characters) with 1 character?'
            human.approve = True
            done = await _call(session, "nc_collectives_edit_page", **arguments)
    assert nextcloud.read_file(nextcloud.alice, path) == b"x"
    assert done["content"] == "x"
    with running_app(_settings(nextcloud, nextcloud_mcp_permissions="write")) as base:
        async with http_session(f"{base}/mcp") as session:
            nextcloud.put_new_version(nextcloud.alice, path, b"a long plan " * 20)
            arguments["etag"] = nextcloud.etag(nextcloud.alice, path)
            refused = await session.call_tool("nc_collectives_edit_page", arguments)
    assert refused.is_error
    assert nextcloud.read_file(nextcloud.alice, path) == b"a long plan " * 20


async def _too_old_for(nextcloud: Nextcloud) -> None:
    with running_app(_settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            result = await session.call_tool(
                "nc_collectives_edit_page", {"collective_id": 1, "page_id": 1, "etag": "abc", "content": ""}
            )
    assert result.is_error
    assert TOO_OLD in _text(result)


async def test_bad_input_is_refused_before_anything_is_sent(apps_nextcloud: Nextcloud) -> None:
    nextcloud = apps_nextcloud
    with running_app(_settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            for tool, arguments, said in [
                (
                    "nc_collectives_create_page",
                    {"collective_id": 1, "title": "  "},
                    "title must not be empty",
                ),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "a\nb"}, "one line"),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "x" * 201}, "at most 200"),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "evil\u202e"}, "U+202E"),
                (
                    "nc_collectives_create_page",
                    {"collective_id": 1, "title": "big", "content": "x" * 1_000_001},
                    "over the limit",
                ),
                (
                    "nc_collectives_edit_page",
                    {"collective_id": 1, "page_id": 1, "etag": 'a", "b', "content": ""},
                    "one ETag",
                ),
                ("nc_collectives_search_pages", {"query": "   "}, "must contain a word"),
            ]:
                result = await session.call_tool(tool, arguments)
                assert result.is_error, (tool, arguments)
                if nextcloud.major < 30:  # refused before the input is even looked at
                    assert TOO_OLD in _text(result), _text(result)
                    continue
                assert said in _text(result), _text(result)
                assert "nothing was changed" in _text(result)
    # nothing reached Collectives: no folder of collectives was ever made for alice
    assert not nextcloud.exists(nextcloud.alice, ".Collectives")


async def test_without_the_app_every_tool_says_it_is_not_installed(apps_nextcloud: Nextcloud) -> None:
    """An administrator disabled Collectives (29 and 34): not 'too old', but not there."""
    nextcloud = apps_nextcloud
    assert nextcloud.instance is not None
    nextcloud.instance.occ("app:disable", "collectives")  # the next test's reset enables it again
    # Nextcloud 34 keeps the enabled apps in a cache for a moment: wait (with a deadline) until
    # Collectives' own route is gone for alice in several answers in a row.
    deadline, gone = time.monotonic() + 30, 0
    with nextcloud.http(nextcloud.alice) as http:
        while gone < 5:
            answer = http.get("/ocs/v2.php/apps/collectives/api/v1.0/collectives")
            gone = gone + 1 if answer.status_code == 404 else 0
            assert time.monotonic() < deadline, answer.status_code
    with running_app(_settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            for tool, arguments in [
                ("nc_collectives_list_collectives", {}),
                ("nc_collectives_create_page", {"collective_id": 1, "title": "Plan"}),
            ]:
                result = await session.call_tool(tool, arguments)
                assert result.is_error
                text = _text(result)
                assert "Collectives is not installed or not enabled for you" in text, text
                assert TOO_OLD not in text


async def test_long_pages_are_cut_and_a_search_says_what_it_read(
    apps_nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """get_page returns at most READ_BYTES and says so; a search reads at most SCAN_PAGES pages
    (the newest) and says it matched the others by title only."""
    nextcloud = apps_nextcloud
    if nextcloud.major < 30:
        await _too_old_for(nextcloud)
        return
    monkeypatch.setattr(collectives_tools, "READ_BYTES", 999)
    monkeypatch.setattr(collectives_tools, "SCAN_PAGES", 2)
    wiki = _collective(nextcloud)
    cid, landing = wiki["id"], wiki["landing"]["id"]
    made = [
        _ocs(nextcloud, nextcloud.alice, "POST", f"/{cid}/pages/{landing}", title=t)["page"] for t in "ABC"
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
    assert _pages(nextcloud, cid)["A"]["timestamp"] == 1000000000
    with running_app(_settings(nextcloud)) as base:
        async with http_session(f"{base}/mcp") as session:
            page = await _call(session, "nc_collectives_get_page", collective_id=cid, page_id=made[0]["id"])
            found = await _call(session, "nc_collectives_search_pages", query="needle", collective_id=cid)
            titled = await _call(session, "nc_collectives_search_pages", query="a", collective_id=cid)
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


def test_a_file_outside_the_users_files_is_refused() -> None:
    """Collectives names a page's file; a path that climbs out of the user's files is not read."""
    page = Page.model_validate(
        {
            "id": 7,
            "title": "x",
            "parentId": 0,
            "fileName": "Readme.md",
            "collectivePath": ".Collectives/../../bob",
        }
    )
    client = CollectivesClient(cast(Any, None), cast(Any, type("Files", (), {"host": "nc.example"})()))
    with pytest.raises(InvalidResponse, match="unusable file for page 7"):
        client._file(page)


def test_the_tree_leaves_out_cycles_and_orphans_and_refuses_an_unknown_root() -> None:
    def page(page_id: int, parent: int, title: str, order: list[int] | None = None) -> Page:
        return Page.model_validate(
            {
                "id": page_id,
                "title": title,
                "parentId": parent,
                "fileName": "a.md",
                "subpageOrder": order or [],
            }
        )

    pages = [
        page(1, 0, "Home", order=[3]),
        page(2, 1, "Alpha"),
        page(3, 1, "Zulu"),
        page(4, 5, "cycle a"),
        page(5, 4, "cycle b"),
        page(6, 99, "orphan"),
    ]
    assert [(p.title, depth) for p, depth in collectives_tools._tree(pages, None)] == [
        ("Home", 0),
        ("Zulu", 1),  # the collective's own order first
        ("Alpha", 1),
    ]
    assert [p.title for p, _ in collectives_tools._tree(pages, 4)] == ["cycle a", "cycle b"]
    with pytest.raises(InvalidInput, match="page 42 is not in this collective"):
        collectives_tools._tree(pages, 42)
