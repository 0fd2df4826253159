"""The file apps' toolsets (trash, versions, tags, comments) end to end: the SDK's client, the real
server over streamable HTTP, the real Nextcloud 29 and 34 (these are core apps, enabled on the
plain instances). Every effect is checked through Nextcloud's own DAV API with alice's app
password, never through our client."""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import ClientSession

from nextcloud_mcp_server.tools import all_tools
from tests.backends import Login, Nextcloud
from tests.mcp_clients import Human, app_session, structured
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

TOOLSETS = "trash,versions,tags,comments"
TOOLS = {
    "nc_trash_list": ("files:read", True, False),
    "nc_trash_restore": ("files:write", False, False),
    "nc_trash_empty": ("files:write", False, True),
    "nc_versions_list": ("files:read", True, False),
    "nc_versions_restore": ("files:write", False, True),
    "nc_tags_list": ("files:read", True, False),
    "nc_tags_assign": ("files:write", False, False),
    "nc_tags_unassign": ("files:write", False, False),
    "nc_tags_find_files": ("files:read", True, False),
    "nc_tags_favorite": ("files:write", False, False),
    "nc_tags_list_favorites": ("files:read", True, False),
    "nc_comments_list": ("files:read", True, False),
    "nc_comments_add": ("files:write", False, False),
}


@asynccontextmanager
async def alice_session(
    nextcloud: Nextcloud, human: Human | None = None, **overrides: Any
) -> AsyncIterator[ClientSession]:
    settings = nextcloud.settings(nextcloud.alice, nextcloud_mcp_toolsets=TOOLSETS, **overrides)
    async with app_session(settings, human) as session:
        yield session


def _text(result: Any) -> str:
    return str(result.content[0].text)


# --- Nextcloud's own answers, read with plain httpx


def _trash_names(nextcloud: Nextcloud, login: Login) -> list[str]:
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", f"/remote.php/dav/trashbin/{login.user}/trash", headers={"Depth": "1"}
        )
    assert answer.status_code == 207, answer.text[:300]
    return re.findall(r"/trash/([^<]+)</d:href>", answer.text)


def _delete(nextcloud: Nextcloud, login: Login, path: str) -> None:
    with nextcloud.http(login) as http:
        assert http.delete(nextcloud.dav_path(login, path)).status_code == 204


def _prop(nextcloud: Nextcloud, login: Login, path: str, prop: str) -> str:
    body = f'<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><{prop}/></d:prop></d:propfind>'
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", nextcloud.dav_path(login, path), headers={"Depth": "0"}, content=body
        )
    found = re.search(rf"<{prop}>([^<]*)<", answer.text)
    assert found, answer.text[:300]
    return found.group(1)


def _file_id(nextcloud: Nextcloud, login: Login, path: str) -> str:
    return _prop(nextcloud, login, path, "oc:fileid")


def _tag_ids_of(nextcloud: Nextcloud, login: Login, path: str) -> set[str]:
    file_id = _file_id(nextcloud, login, path)
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", f"/remote.php/dav/systemtags-relations/files/{file_id}", headers={"Depth": "1"}
        )
    return set(re.findall(rf"/files/{file_id}/(\d+)</d:href>", answer.text))


def _is_favorite(nextcloud: Nextcloud, login: Login, path: str) -> bool:
    body = '<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:favorite/></d:prop></d:propfind>'
    with nextcloud.http(login) as http:
        answer = http.request(
            "PROPFIND", nextcloud.dav_path(login, path), headers={"Depth": "0"}, content=body
        )
    assert answer.status_code == 207, answer.text[:300]
    return "<oc:favorite>1</oc:favorite>" in answer.text


def _comments(nextcloud: Nextcloud, login: Login, path: str) -> list[str]:
    file_id = _file_id(nextcloud, login, path)
    body = (
        '<oc:filter-comments xmlns:oc="http://owncloud.org/ns"><oc:limit>100</oc:limit></oc:filter-comments>'
    )
    with nextcloud.http(login) as http:
        answer = http.request("REPORT", f"/remote.php/dav/comments/files/{file_id}", content=body)
    assert answer.status_code == 207, answer.text[:300]
    return re.findall(r"<oc:message>([^<]*)</oc:message>", answer.text)


def _put_in_a_later_second(nextcloud: Nextcloud, login: Login, path: str, data: bytes) -> None:
    """Versions are named by their modification time in seconds: a new version written in the
    second of the last one would take its name, so wait (with a deadline) for the next second."""
    if nextcloud.exists(login, path):
        stamp = _prop(nextcloud, login, path, "d:getlastmodified")
        last = calendar.timegm(time.strptime(stamp, "%a, %d %b %Y %H:%M:%S GMT"))
        deadline = time.monotonic() + 5
        while time.time() < last + 1:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    nextcloud.put_file(login, path, data)


# --- tests


async def test_the_four_toolsets_are_thirteen_tools_on_the_files_scopes_and_fewer_at_level_write(
    each_real_nextcloud: Nextcloud,
) -> None:
    """At the write level, emptying the trash and restoring a version are not offered (one real
    run per version for both listings: they differ only in this server's filter)."""
    async with alice_session(each_real_nextcloud) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    async with alice_session(each_real_nextcloud, nextcloud_mcp_permissions="write") as session:
        names_at_write = {t.name for t in (await session.list_tools()).tools}
        refused = await session.call_tool("nc_trash_empty", {})
    assert names_at_write == set(TOOLS) - {"nc_trash_empty", "nc_versions_restore"}
    assert refused.is_error
    assert set(tools) == set(TOOLS)
    for name, (scope, read_only, destructive) in TOOLS.items():
        tool = tools[name]
        assert tool.meta is not None
        assert tool.meta["nextcloud-mcp/scopes"] == [scope]
        # and, for a tool that asks, the link to the approval view (ADR 0077)
        assert tool.meta == {spec.name: spec.meta for spec in all_tools()}[name]
        assert tool.annotations is not None
        assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (
            read_only,
            destructive,
        )
        assert tool.description, name
        assert len(tool.description) < 220, name


async def test_trash_lists_restores_refuses_a_taken_place_and_empties_after_approval(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    nc.put_file(alice, "Docs/a.txt", b"alpha")
    nc.put_file(alice, "b.txt", b"old b")
    _delete(nc, alice, "Docs/a.txt")
    _delete(nc, alice, "b.txt")
    nc.put_file(alice, "b.txt", b"new b")  # b's place is taken again
    human = Human()
    async with alice_session(nc, human) as session:
        listed = structured(await session.call_tool("nc_trash_list", {}))
        assert listed["total"] == 2
        assert listed["total_size"] == len(b"alpha") + len(b"old b")
        by_path = {i["original_path"]: i for i in listed["items"]}
        assert set(by_path) == {"/Docs/a.txt", "/b.txt"}
        assert by_path["/Docs/a.txt"]["type"] == "file"
        assert by_path["/Docs/a.txt"]["size"] == 5
        deleted = [i["deleted"] for i in listed["items"]]
        assert deleted == sorted(deleted, reverse=True)
        one = structured(await session.call_tool("nc_trash_list", {"limit": 1, "offset": 1}))
        assert [i["name"] for i in one["items"]] == [listed["items"][1]["name"]]
        assert one["total"] == 2

        taken = await session.call_tool("nc_trash_restore", {"name": by_path["/b.txt"]["name"]})
        assert taken.is_error
        assert "/b.txt already exists" in _text(taken)
        assert nc.read_file(alice, "b.txt") == b"new b"
        assert by_path["/b.txt"]["name"] in _trash_names(nc, alice)

        restored = structured(
            await session.call_tool("nc_trash_restore", {"name": by_path["/Docs/a.txt"]["name"]})
        )
        assert restored["path"] == "/Docs/a.txt"
        assert nc.read_file(alice, "Docs/a.txt") == b"alpha"
        assert _trash_names(nc, alice) == [by_path["/b.txt"]["name"]]

        for bad in ("../b.txt", "a/b", ".."):
            refused = await session.call_tool("nc_trash_restore", {"name": bad})
            assert refused.is_error
            assert "invalid input" in _text(refused)
        missing = await session.call_tool("nc_trash_restore", {"name": "nothing.txt.d1"})
        assert "no item named 'nothing.txt.d1' in the trash" in _text(missing)

        # its folder gone, an item goes back into the root folder
        nc.put_file(alice, "Gone/c.txt", b"c")
        _delete(nc, alice, "Gone/c.txt")
        _delete(nc, alice, "Gone")
        items = structured(await session.call_tool("nc_trash_list", {}))["items"]
        [c_item] = [i for i in items if i["original_path"] == "/Gone/c.txt"]
        assert (
            structured(await session.call_tool("nc_trash_restore", {"name": c_item["name"]}))["path"]
            == "/c.txt"
        )
        assert nc.read_file(alice, "c.txt") == b"c"
        assert not nc.exists(alice, "Gone")
        [folder] = [i for i in items if i["original_path"] == "/Gone"]
        assert folder["type"] == "directory"
        structured(await session.call_tool("nc_trash_restore", {"name": folder["name"]}))
        assert nc.exists(alice, "Gone")

        emptied = structured(await session.call_tool("nc_trash_empty", {}))
    assert emptied == {"deleted": 1}
    assert _trash_names(nc, alice) == []
    [question] = human.questions
    assert question.startswith("Permanently delete all 1 item(s) in your trash (5 bytes): /b.txt?")


async def test_emptying_the_trash_declined_or_changed_meanwhile_deletes_nothing(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    nc.put_file(alice, "gone.txt", b"x")
    nc.put_file(alice, "later.txt", b"y")
    _delete(nc, alice, "gone.txt")
    async with alice_session(nc, Human(approve=False)) as session:
        declined = await session.call_tool("nc_trash_empty", {})
    assert refusal_details(declined)["decision"] == "declined"
    assert len(_trash_names(nc, alice)) == 1

    async def delete_another() -> None:
        _delete(nc, alice, "later.txt")

    async with alice_session(nc, Human(while_asked=delete_another)) as session:
        changed = await session.call_tool("nc_trash_empty", {})
    assert refusal_details(changed) == {"error": "conflict", "decision": "refused_changed"}
    assert len(_trash_names(nc, alice)) == 2


async def test_versions_list_newest_first_and_restore_an_older_one_after_approval(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    for content in (b"one", b"two two", b"three"):
        _put_in_a_later_second(nc, alice, "v.txt", content)
    human = Human()
    async with alice_session(nc, human) as session:
        listed = structured(await session.call_tool("nc_versions_list", {"path": "v.txt"}))
        assert listed["path"] == "/v.txt"
        assert [(v["size"], v["current"]) for v in listed["versions"]] == [
            (5, True),
            (7, False),
            (3, False),
        ], listed
        oldest = listed["versions"][-1]["version"]

        current = await session.call_tool(
            "nc_versions_restore", {"path": "v.txt", "version": listed["versions"][0]["version"]}
        )
        assert "is the current content" in _text(current)
        bad = await session.call_tool("nc_versions_restore", {"path": "v.txt", "version": "../1"})
        assert "invalid input" in _text(bad)
        folder = await session.call_tool("nc_versions_list", {"path": "/"})
        assert "invalid input" in _text(folder)
        assert human.questions == []

        restored = structured(
            await session.call_tool("nc_versions_restore", {"path": "v.txt", "version": oldest})
        )
        assert restored == {"path": "/v.txt", "version": oldest, "size": 3}
        assert nc.read_file(alice, "v.txt") == b"one"
        after = structured(await session.call_tool("nc_versions_list", {"path": "v.txt"}))
    # what was current is kept as a version
    assert 5 in [v["size"] for v in after["versions"] if not v["current"]]
    [question] = human.questions
    assert question.startswith("Replace the current content of /v.txt (5 bytes, last changed")
    assert "(3 bytes)? The current content is kept as a version." in question


async def test_a_version_restore_declined_or_overtaken_keeps_the_current_content(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    for content in (b"first", b"second"):
        _put_in_a_later_second(nc, alice, "w.txt", content)
    async with alice_session(nc, Human(approve=False)) as session:
        listed = structured(await session.call_tool("nc_versions_list", {"path": "w.txt"}))
        oldest = {"path": "w.txt", "version": listed["versions"][-1]["version"]}
        declined = await session.call_tool("nc_versions_restore", oldest)
    assert refusal_details(declined)["decision"] == "declined"
    assert nc.read_file(alice, "w.txt") == b"second"

    async def edit_elsewhere() -> None:
        _put_in_a_later_second(nc, alice, "w.txt", b"third, from another device")

    async with alice_session(nc, Human(while_asked=edit_elsewhere)) as session:
        overtaken = await session.call_tool("nc_versions_restore", oldest)
    assert refusal_details(overtaken) == {"error": "conflict", "decision": "refused_changed"}
    assert nc.read_file(alice, "w.txt") == b"third, from another device"

    async with alice_session(nc, confirm_destructive=False) as session:  # approvals off: no question
        structured(await session.call_tool("nc_versions_restore", oldest))
    assert nc.read_file(alice, "w.txt") == b"first"


async def test_tags_are_created_only_when_asked_assigned_found_and_removed(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice, admin = each_real_nextcloud, each_real_nextcloud.alice, each_real_nextcloud.admin
    nc.put_file(alice, "Docs/report.txt", b"r")
    nc.put_file(alice, "other.txt", b"o")
    nc.put_file(admin, "admins.txt", b"a")
    human = Human()  # a new tag's name is seen by every user: creating one asks (ADR 0058)
    async with alice_session(nc, human) as session:
        missing = await session.call_tool("nc_tags_assign", {"path": "Docs/report.txt", "tag": "Q&A <1>"})
        assert "there is no tag named 'Q&A <1>'" in _text(missing)
        assert "call again with create=true" in _text(missing)  # the argument that would create it
        assert _tag_ids_of(nc, alice, "Docs/report.txt") == set()

        created = structured(
            await session.call_tool(
                "nc_tags_assign", {"path": "Docs/report.txt", "tag": "Q&A <1>", "create": True}
            )
        )
        assert (created["tag"], created["changed"], created["created_tag"]) == ("Q&A <1>", True, True)
        [question] = human.questions
        assert "every user of this Nextcloud" in question
        assert '"Q&A <1>"' in question
        assert _tag_ids_of(nc, alice, "Docs/report.txt") == {str(created["tag_id"])}
        again = structured(
            await session.call_tool("nc_tags_assign", {"path": "Docs/report.txt", "tag": "q&a <1>"})
        )
        assert (again["changed"], again["created_tag"], again["tag_id"]) == (False, False, created["tag_id"])

        listed = structured(await session.call_tool("nc_tags_list", {}))
        assert [(t["name"], t["assignable"]) for t in listed["tags"]] == [("Q&A <1>", True)]
        of_file = structured(await session.call_tool("nc_tags_list", {"path": "Docs/report.txt"}))
        assert (of_file["path"], [t["name"] for t in of_file["tags"]]) == ("/Docs/report.txt", ["Q&A <1>"])
        assert structured(await session.call_tool("nc_tags_list", {"path": "other.txt"}))["tags"] == []

    # admin tags their own file with the same tag: alice never sees it
    admin_file = _file_id(nc, admin, "admins.txt")
    with nc.http(admin) as http:
        assert (
            http.put(
                f"/remote.php/dav/systemtags-relations/files/{admin_file}/{created['tag_id']}"
            ).status_code
            == 201
        )
    async with alice_session(nc) as session:
        found = structured(await session.call_tool("nc_tags_find_files", {"tag": "Q&A <1>"}))
        assert found["tag"] == "Q&A <1>"
        assert [(f["path"], f["type"], f["size"]) for f in found["files"]] == [
            ("/Docs/report.txt", "file", 1)
        ]
        assert found["next_offset"] is None

        removed = structured(
            await session.call_tool("nc_tags_unassign", {"path": "Docs/report.txt", "tag": "Q&A <1>"})
        )
        assert removed["changed"] is True
        assert _tag_ids_of(nc, alice, "Docs/report.txt") == set()
        twice = await session.call_tool("nc_tags_unassign", {"path": "Docs/report.txt", "tag": "Q&A <1>"})
        assert "does not have this tag" in _text(twice)
        unknown = await session.call_tool("nc_tags_find_files", {"tag": "nope"})
        assert "there is no tag named 'nope'" in _text(unknown)
        assert "create=true" not in _text(unknown)  # this tool creates no tag

        # favorites: the star in Files, as Nextcloud's own PROPFIND reads it
        starred = structured(await session.call_tool("nc_tags_favorite", {"path": "Docs"}))
        assert starred == {"path": "/Docs", "favorite": True}
        await session.call_tool("nc_tags_favorite", {"path": "other.txt"})
        assert (_is_favorite(nc, alice, "Docs"), _is_favorite(nc, alice, "Docs/report.txt")) == (True, False)
        favorites = structured(await session.call_tool("nc_tags_list_favorites", {"limit": 1}))
        assert len(favorites["files"]) == 1
        assert favorites["next_offset"] == 1
        rest = structured(await session.call_tool("nc_tags_list_favorites", {"offset": 1}))
        assert sorted(f["path"] for f in favorites["files"] + rest["files"]) == ["/Docs", "/other.txt"]
        unstarred = structured(
            await session.call_tool("nc_tags_favorite", {"path": "Docs", "favorite": False})
        )
        assert unstarred["favorite"] is False
        assert not _is_favorite(nc, alice, "Docs")
        missing_file = await session.call_tool("nc_tags_favorite", {"path": "nowhere.txt"})
        assert missing_file.is_error
    assert _tag_ids_of(nc, admin, "admins.txt") == {str(created["tag_id"])}


async def test_finding_by_tag_pages(each_real_nextcloud: Nextcloud) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    for n in range(3):
        nc.put_file(alice, f"t{n}.txt", b"t")
    async with alice_session(nc, Human()) as session:
        for n in range(3):
            structured(
                await session.call_tool("nc_tags_assign", {"path": f"t{n}.txt", "tag": "x", "create": n == 0})
            )
        first = structured(await session.call_tool("nc_tags_find_files", {"tag": "x", "limit": 2}))
        rest = structured(
            await session.call_tool("nc_tags_find_files", {"tag": "x", "limit": 2, "offset": 2})
        )
    assert (len(first["files"]), first["next_offset"]) == (2, 2)
    assert (len(rest["files"]), rest["next_offset"]) == (1, None)
    assert {f["path"] for f in first["files"] + rest["files"]} == {"/t0.txt", "/t1.txt", "/t2.txt"}


async def test_comments_are_added_and_listed_newest_first_in_pages(each_real_nextcloud: Nextcloud) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    nc.put_file(alice, "Docs/plan.md", b"# plan")
    async with alice_session(nc) as session:
        for text in ("first", "second <b>&", "third @admin"):
            added = structured(
                await session.call_tool("nc_comments_add", {"path": "Docs/plan.md", "message": text})
            )
            assert added["path"] == "/Docs/plan.md"
            assert isinstance(added["id"], int)
        assert sorted(_comments(nc, alice, "Docs/plan.md")) == sorted(
            ["first", "second &lt;b&gt;&amp;", "third @admin"]
        )

        page = structured(await session.call_tool("nc_comments_list", {"path": "Docs/plan.md", "limit": 2}))
        assert [c["message"] for c in page["comments"]] == ["third @admin", "second <b>&"]
        assert page["comments"][0]["mentions"] == ["admin"]
        assert (page["comments"][0]["author_id"], page["comments"][0]["author"]) == ("alice", "Alice")
        assert page["next_offset"] == 2
        rest = structured(
            await session.call_tool("nc_comments_list", {"path": "Docs/plan.md", "limit": 2, "offset": 2})
        )
        assert ([c["message"] for c in rest["comments"]], rest["next_offset"]) == (["first"], None)

        too_long = await session.call_tool("nc_comments_add", {"path": "Docs/plan.md", "message": "x" * 1001})
        assert too_long.is_error
        blank = await session.call_tool("nc_comments_add", {"path": "Docs/plan.md", "message": "   "})
        assert "needs some text" in _text(blank)
        nowhere = await session.call_tool("nc_comments_add", {"path": "Docs/none.md", "message": "hi"})
        assert "no file or folder at /Docs/none.md" in _text(nowhere)
    assert len(_comments(nc, alice, "Docs/plan.md")) == 3
