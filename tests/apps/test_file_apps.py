"""The file apps' toolsets (trash, versions, tags, comments) end to end: the SDK's client, the real
server over streamable HTTP, the real Nextcloud 29 and 34 (these are core apps, enabled on the
plain instances). Every effect is checked through Nextcloud's own DAV API with alice's app
password, never through our client."""

from __future__ import annotations

import pytest

from nextcloud_mcp_server.tools import all_tools
from tests.apps.file_apps_api import (
    alice_session,
    delete_file,
    put_in_a_later_second,
    text_of,
    trash_names,
)
from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured
from tests.strict_clients import refusal_details

pytestmark = pytest.mark.integration

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
    delete_file(nc, alice, "Docs/a.txt")
    delete_file(nc, alice, "b.txt")
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
        assert "/b.txt already exists" in text_of(taken)
        assert nc.read_file(alice, "b.txt") == b"new b"
        assert by_path["/b.txt"]["name"] in trash_names(nc, alice)

        restored = structured(
            await session.call_tool("nc_trash_restore", {"name": by_path["/Docs/a.txt"]["name"]})
        )
        assert restored["path"] == "/Docs/a.txt"
        assert nc.read_file(alice, "Docs/a.txt") == b"alpha"
        assert trash_names(nc, alice) == [by_path["/b.txt"]["name"]]

        for bad in ("../b.txt", "a/b", ".."):
            refused = await session.call_tool("nc_trash_restore", {"name": bad})
            assert refused.is_error
            assert "invalid input" in text_of(refused)
        missing = await session.call_tool("nc_trash_restore", {"name": "nothing.txt.d1"})
        assert "no item named 'nothing.txt.d1' in the trash" in text_of(missing)

        # its folder gone, an item goes back into the root folder
        nc.put_file(alice, "Gone/c.txt", b"c")
        delete_file(nc, alice, "Gone/c.txt")
        delete_file(nc, alice, "Gone")
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
    assert trash_names(nc, alice) == []
    [question] = human.questions
    assert question.startswith("Permanently delete all 1 item(s) in your trash (5 bytes): /b.txt?")


async def test_emptying_the_trash_declined_or_changed_meanwhile_deletes_nothing(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    nc.put_file(alice, "gone.txt", b"x")
    nc.put_file(alice, "later.txt", b"y")
    delete_file(nc, alice, "gone.txt")
    async with alice_session(nc, Human(approve=False)) as session:
        declined = await session.call_tool("nc_trash_empty", {})
    assert refusal_details(declined)["decision"] == "declined"
    assert len(trash_names(nc, alice)) == 1

    async def delete_another() -> None:
        delete_file(nc, alice, "later.txt")

    async with alice_session(nc, Human(while_asked=delete_another)) as session:
        changed = await session.call_tool("nc_trash_empty", {})
    assert refusal_details(changed) == {"error": "conflict", "decision": "refused_changed"}
    assert len(trash_names(nc, alice)) == 2


async def test_versions_list_newest_first_and_restore_an_older_one_after_approval(
    each_real_nextcloud: Nextcloud,
) -> None:
    nc, alice = each_real_nextcloud, each_real_nextcloud.alice
    for content in (b"one", b"two two", b"three"):
        put_in_a_later_second(nc, alice, "v.txt", content)
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
        assert "is the current content" in text_of(current)
        bad = await session.call_tool("nc_versions_restore", {"path": "v.txt", "version": "../1"})
        assert "invalid input" in text_of(bad)
        folder = await session.call_tool("nc_versions_list", {"path": "/"})
        assert "invalid input" in text_of(folder)
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
        put_in_a_later_second(nc, alice, "w.txt", content)
    async with alice_session(nc, Human(approve=False)) as session:
        listed = structured(await session.call_tool("nc_versions_list", {"path": "w.txt"}))
        oldest = {"path": "w.txt", "version": listed["versions"][-1]["version"]}
        declined = await session.call_tool("nc_versions_restore", oldest)
    assert refusal_details(declined)["decision"] == "declined"
    assert nc.read_file(alice, "w.txt") == b"second"

    async def edit_elsewhere() -> None:
        put_in_a_later_second(nc, alice, "w.txt", b"third, from another device")

    async with alice_session(nc, Human(while_asked=edit_elsewhere)) as session:
        overtaken = await session.call_tool("nc_versions_restore", oldest)
    assert refusal_details(overtaken) == {"error": "conflict", "decision": "refused_changed"}
    assert nc.read_file(alice, "w.txt") == b"third, from another device"

    async with alice_session(nc, confirm_destructive=False) as session:  # approvals off: no question
        structured(await session.call_tool("nc_versions_restore", oldest))
    assert nc.read_file(alice, "w.txt") == b"first"
