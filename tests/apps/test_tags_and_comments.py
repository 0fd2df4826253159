"""The tags and comments toolsets end to end: the SDK's client, the real server over streamable
HTTP, the real Nextcloud 29 and 34. Every effect is checked through Nextcloud's own DAV API with
alice's app password, never through our client."""

from __future__ import annotations

import pytest

from tests.apps.file_apps_api import (
    alice_session,
    comments_on,
    file_id_of,
    is_favorite,
    tag_ids_of,
    text_of,
)
from tests.backends import Nextcloud
from tests.mcp_clients import Human, structured

pytestmark = pytest.mark.integration


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
        assert "there is no tag named 'Q&A <1>'" in text_of(missing)
        assert "call again with create=true" in text_of(missing)  # the argument that would create it
        assert tag_ids_of(nc, alice, "Docs/report.txt") == set()

        created = structured(
            await session.call_tool(
                "nc_tags_assign", {"path": "Docs/report.txt", "tag": "Q&A <1>", "create": True}
            )
        )
        assert (created["tag"], created["changed"], created["created_tag"]) == ("Q&A <1>", True, True)
        [question] = human.questions
        assert "every user of this Nextcloud" in question
        assert '"Q&A <1>"' in question
        assert tag_ids_of(nc, alice, "Docs/report.txt") == {str(created["tag_id"])}
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
    admin_file = file_id_of(nc, admin, "admins.txt")
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
        assert tag_ids_of(nc, alice, "Docs/report.txt") == set()
        twice = await session.call_tool("nc_tags_unassign", {"path": "Docs/report.txt", "tag": "Q&A <1>"})
        assert "does not have this tag" in text_of(twice)
        unknown = await session.call_tool("nc_tags_find_files", {"tag": "nope"})
        assert "there is no tag named 'nope'" in text_of(unknown)
        assert "create=true" not in text_of(unknown)  # this tool creates no tag

        # favorites: the star in Files, as Nextcloud's own PROPFIND reads it
        starred = structured(await session.call_tool("nc_tags_favorite", {"path": "Docs"}))
        assert starred == {"path": "/Docs", "favorite": True}
        await session.call_tool("nc_tags_favorite", {"path": "other.txt"})
        assert (is_favorite(nc, alice, "Docs"), is_favorite(nc, alice, "Docs/report.txt")) == (True, False)
        favorites = structured(await session.call_tool("nc_tags_list_favorites", {"limit": 1}))
        assert len(favorites["files"]) == 1
        assert favorites["next_offset"] == 1
        rest = structured(await session.call_tool("nc_tags_list_favorites", {"offset": 1}))
        assert sorted(f["path"] for f in favorites["files"] + rest["files"]) == ["/Docs", "/other.txt"]
        unstarred = structured(
            await session.call_tool("nc_tags_favorite", {"path": "Docs", "favorite": False})
        )
        assert unstarred["favorite"] is False
        assert not is_favorite(nc, alice, "Docs")
        missing_file = await session.call_tool("nc_tags_favorite", {"path": "nowhere.txt"})
        assert missing_file.is_error
    assert tag_ids_of(nc, admin, "admins.txt") == {str(created["tag_id"])}


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
        assert sorted(comments_on(nc, alice, "Docs/plan.md")) == sorted(
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
        assert "needs some text" in text_of(blank)
        nowhere = await session.call_tool("nc_comments_add", {"path": "Docs/none.md", "message": "hi"})
        assert "no file or folder at /Docs/none.md" in text_of(nowhere)
    assert len(comments_on(nc, alice, "Docs/plan.md")) == 3
