"""Unit tests of the file apps' DAV clients (trash, versions, tags, comments) against hostile or
odd answers and input: names that could climb out of their collection send nothing, a huge trash
keeps only the page asked for, what a server sends is cut to its bounds."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.dav.file_apps import one_segment
from nextcloud_mcp_server.nextcloud.errors import InvalidInput, NotFound
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.toolsets.comments.client import CommentsClient, check_message
from nextcloud_mcp_server.toolsets.tags.client import SystemTagsClient, check_tag_name
from nextcloud_mcp_server.toolsets.trash.client import TrashClient
from nextcloud_mcp_server.toolsets.versions.client import VersionsClient, check_version_id
from tests import http_mock
from tests.recordings import load

BASE = "https://cloud.example.com"
TRASH = f"{BASE}/remote.php/dav/trashbin/alice/trash"
NS = 'xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"'


@pytest.fixture
async def http() -> AsyncIterator[NextcloudHTTP]:
    client = NextcloudHTTP(BASE, max_retries=0)
    yield client
    await client.aclose()


def _multistatus(*responses: str) -> http_mock.Response:
    body = f'<?xml version="1.0"?><d:multistatus {NS}>{"".join(responses)}</d:multistatus>'
    return http_mock.Response(207, text=body, headers={"content-type": "application/xml; charset=utf-8"})


def _trash_item(name: str, deleted: int, size: int = 1) -> str:
    return (
        f"<d:response><d:href>/remote.php/dav/trashbin/alice/trash/{name}</d:href><d:propstat><d:prop>"
        f"<nc:trashbin-filename>{name}</nc:trashbin-filename>"
        f"<nc:trashbin-original-location>Docs/{name}</nc:trashbin-original-location>"
        f"<nc:trashbin-deletion-time>{deleted}</nc:trashbin-deletion-time><oc:size>{size}</oc:size>"
        "<d:resourcetype/></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
    )


@pytest.mark.parametrize("name", ["..", ".", "a/b", "..%2Fbob", "a\\b", "x\x00y", " ", "", "é" * 600])
def test_a_name_that_could_leave_its_collection_is_refused(name: str) -> None:
    with pytest.raises(InvalidInput):
        one_segment(name, "trash item name")


@pytest.mark.parametrize("version", ["../1", "1e3", "-1", "١٢٣", "1" * 21, ""])
def test_a_version_id_is_ascii_digits(version: str) -> None:
    with pytest.raises(InvalidInput):
        check_version_id(version)


def test_tag_names_and_messages_are_bounded() -> None:
    assert check_tag_name("  two   words ") == "two words"
    with pytest.raises(InvalidInput):
        check_tag_name("x" * 65)
    with pytest.raises(InvalidInput):
        check_tag_name(" \t ")
    assert check_message("x" * 1000) == "x" * 1000
    with pytest.raises(InvalidInput, match="at most 1000 characters"):
        check_message("x" * 1001)


@http_mock.mock
async def test_a_huge_trash_keeps_only_the_newest_page_and_counts_the_rest(http: NextcloudHTTP) -> None:
    items = [_trash_item(f"f{n}.txt.d{1_000 + n}", 1_000 + n, size=2) for n in range(5_000)]
    own = "<d:response><d:href>/remote.php/dav/trashbin/alice/trash/</d:href></d:response>"
    http_mock.request("PROPFIND", TRASH).mock(return_value=_multistatus(own, *items))
    page = await TrashClient(http, BasicCredential("alice", "pw"), "alice").list_items(limit=3, offset=1)
    assert [i.name for i in page.items] == ["f4998.txt.d5998", "f4997.txt.d5997", "f4996.txt.d5996"]
    assert (page.total, page.total_size) == (5_000, 10_000)
    assert page.items[0].original_location == "Docs/f4998.txt.d5998"


@http_mock.mock
async def test_a_trash_bin_that_is_not_there_says_which_app(http: NextcloudHTTP) -> None:
    http_mock.request("PROPFIND", TRASH).mock(return_value=http_mock.Response(404, text="not here"))
    with pytest.raises(NotFound, match="files_trashbin"):
        await TrashClient(http, BasicCredential("alice", "pw"), "alice").list_items(limit=5)


@http_mock.mock
async def test_refused_names_send_nothing(http: NextcloudHTTP) -> None:
    """No route is declared: a request would fail the test."""
    trash = TrashClient(http, BasicCredential("alice", "pw"), "alice")
    for name in ("../../files/alice/x", "a/b"):
        with pytest.raises(InvalidInput):
            await trash.restore(name)


@http_mock.mock
async def test_a_servers_long_comment_and_many_mentions_are_cut(http: NextcloudHTTP) -> None:
    mentions = "".join(f"<oc:mention><oc:mentionId>u{n}</oc:mentionId></oc:mention>" for n in range(500))
    comment = (
        "<d:response><d:href>/remote.php/dav/comments/files/7/1</d:href><d:propstat><d:prop>"
        f"<oc:id>1</oc:id><oc:verb>comment</oc:verb><oc:actorId>bob</oc:actorId><oc:message>{'m' * 50_000}"
        f"</oc:message><oc:mentions>{mentions}</oc:mentions></d:prop>"
        "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
    )
    http_mock.request("REPORT", f"{BASE}/remote.php/dav/comments/files/7").mock(
        return_value=_multistatus(comment)
    )
    [found] = await CommentsClient(http, BasicCredential("alice", "pw"), "alice").list_comments(7, limit=5)
    assert (len(found.message), len(found.mentions), found.author_id) == (1000, 50, "bob")


def _recorded(name: str, version: str) -> http_mock.Response:
    recording = load(name, version)
    headers = {k: v for k, v in recording.headers.items() if k in ("content-type", "content-location")}
    return http_mock.Response(recording.status, text=recording.body, headers=headers)


@pytest.mark.parametrize("version", ["29", "34"])
@http_mock.mock
async def test_the_recorded_answers_of_29_and_34_read_the_same(version: str, http: NextcloudHTTP) -> None:
    """tests/record_file_apps.py: a file with three versions, a deleted file, a tag, a comment."""
    alice = BasicCredential("alice", "pw")
    file_id = int(re.findall(r"<oc:fileid>(\d+)<", load("file_apps_fileid", version).body)[0])
    dav = f"{BASE}/remote.php/dav"
    http_mock.request("PROPFIND", f"{dav}/versions/alice/versions/{file_id}").mock(
        return_value=_recorded("file_apps_versions", version)
    )
    http_mock.request("PROPFIND", f"{dav}/trashbin/alice/trash").mock(
        return_value=_recorded("file_apps_trash", version)
    )
    http_mock.post(f"{dav}/systemtags/").mock(return_value=_recorded("file_apps_tag_create", version))
    relation = f"{dav}/systemtags-relations/files/{file_id}/1"
    http_mock.put(relation).mock(
        side_effect=[
            _recorded("file_apps_tag_assign", version),
            _recorded("file_apps_tag_assign_again", version),
        ]
    )
    http_mock.request("REPORT", f"{dav}/files/alice/").mock(
        return_value=_recorded("file_apps_tag_files", version)
    )
    http_mock.request("REPORT", f"{dav}/comments/files/{file_id}").mock(
        return_value=_recorded("file_apps_comments", version)
    )

    versions = await VersionsClient(http, alice, "alice").list_versions(file_id)
    assert [v.size for v in versions] == [5, 7, 3]  # newest first; the current content is listed too
    assert all(v.mime == "text/plain" for v in versions)
    trash = await TrashClient(http, alice, "alice").list_items(limit=10)
    [item] = trash.items
    assert (item.file_name, item.original_location, item.kind, item.size) == ("t.txt", "t.txt", "file", 8)
    assert item.name == f"t.txt.d{item.deleted_at}"
    assert item.deleted_by == ("alice" if version == "34" else None)  # deleted-by: 34 only
    tags = SystemTagsClient(http, alice, "alice")
    tag = await tags.create("Project X")
    assert (tag.id, tag.name) == (1, "Project X")
    assert (await tags.assign(file_id, 1), await tags.assign(file_id, 1)) == (True, False)
    [tagged] = await tags.files_with(1, limit=5)
    assert (tagged.path, tagged.file_id, tagged.size) == ("v.txt", file_id, 5)
    [comment] = await CommentsClient(http, alice, "alice").list_comments(file_id, limit=5)
    assert (comment.author_id, comment.author, comment.message, comment.mentions) == (
        "alice",
        "Alice",
        "hello @admin",
        ["admin"],
    )
