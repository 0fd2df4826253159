"""Folder listings kept with the folder's ETag, paging, progress, and contacts searched without
their photos: against the double, the real Nextcloud 29 and the real 34 (issue 30, ADR 0051).

Changes are made by another WebDAV client (plain httpx, tests/backends.py) unless a test says it
goes through this server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import folder_listing, vcard, webdav
from nextcloud_mcp_server.nextcloud.dav.files import entry_key
from nextcloud_mcp_server.nextcloud.dav.folder_listing import FolderListing, list_folder
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudHTTPError
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from tests.backends import Nextcloud
from tests.mcp_clients import http_session, running_app, structured

pytestmark = pytest.mark.integration


@asynccontextmanager
async def _files(nextcloud: Nextcloud) -> AsyncIterator[WebDAVClient]:
    http = NextcloudHTTP(nextcloud.url)
    try:
        credential = BasicCredential(nextcloud.admin.user, nextcloud.admin.app_password)
        yield await NextcloudClient(http, credential).files()
    finally:
        await http.aclose()


def _shown(listing: FolderListing) -> list[tuple[Any, ...]]:
    return [(e.path, e.kind, e.size, e.modified, e.etag, e.mime) for e in listing.entries]


def _run(nextcloud: Nextcloud, body: Callable[[WebDAVClient], Awaitable[None]]) -> None:
    async def main() -> None:
        async with _files(nextcloud) as files:
            await body(files)

    asyncio.run(main())


def test_a_kept_listing_is_used_only_while_nextcloud_confirms_the_folder_etag(nextcloud: Nextcloud) -> None:
    """Every kind of change by another client - added, removed, renamed, changed, changed two
    levels down - gives the folder a new ETag, so the next listing reads the folder again and
    equals a fresh one; an unchanged folder is answered from the kept listing."""
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Kept/a.txt", b"a")
    nextcloud.put_file(admin, "Kept/b.txt", b"bb")
    nextcloud.put_file(admin, "Kept/sub/deeper/c.txt", b"ccc")
    dav = nextcloud.http(admin)

    def add() -> None:
        nextcloud.put_file(admin, "Kept/d.txt", b"dddd")

    def remove() -> None:
        assert dav.delete(nextcloud.dav_path(admin, "Kept/a.txt")).status_code == 204

    def rename() -> None:
        target = nextcloud.url + nextcloud.dav_path(admin, "Kept/b-renamed.txt")
        moved = dav.request("MOVE", nextcloud.dav_path(admin, "Kept/b.txt"), headers={"Destination": target})
        assert moved.status_code == 201

    def change() -> None:
        nextcloud.put_file(admin, "Kept/d.txt", b"d, longer now")

    def change_deep() -> None:
        nextcloud.put_file(admin, "Kept/sub/deeper/c.txt", b"c, longer now")

    async def body(files: WebDAVClient) -> None:
        answers = KeptAnswers()
        first = await list_folder(files, "Kept", top=50, answers=answers)
        again = await list_folder(files, "Kept", top=50, answers=answers)
        assert (first.reused, again.reused) == (False, True)
        assert _shown(again) == _shown(first)
        assert again.total == first.total == 3
        for step in (add, remove, rename, change, change_deep):
            before = await files.current_etag("Kept")
            await asyncio.to_thread(step)
            assert await files.current_etag("Kept") != before, step.__name__
            seen = await list_folder(files, "Kept", top=50, answers=answers)
            fresh = await list_folder(files, "Kept", top=50)
            assert not seen.reused, step.__name__
            assert _shown(seen) == _shown(fresh), step.__name__
            assert (await list_folder(files, "Kept", top=50, answers=answers)).reused
        names = [e.name for e in seen.entries]
        assert names == ["sub", "b-renamed.txt", "d.txt"]
        sub = seen.entries[0]
        if nextcloud.kind == "real":  # the double gives folders no size
            assert sub.size == len(b"c, longer now")
            assert sub.etag == nextcloud.etag(admin, "Kept/sub")

    try:
        _run(nextcloud, body)
    finally:
        dav.close()


def test_a_changed_folder_is_parsed_only_where_nextcloud_sends_an_entry_anew(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nextcloud writes an unchanged entry as the same bytes: a changed folder's answer is read
    against the kept one's, and only the folder itself and the entries that changed are parsed
    (ADR 0116). What the listing shows is a fresh listing's, after each kind of change."""
    admin = nextcloud.admin
    for n in range(30):
        nextcloud.put_file(admin, f"Bytes/{n:02}.txt", b"x" * n)
    parsed: list[str] = []

    def counted(element: Any) -> Any:
        key = entry_key(element)
        parsed.append(key[0].rpartition("/Bytes/")[2])
        return key

    monkeypatch.setattr(webdav, "entry_key", counted)
    dav = nextcloud.http(admin)

    def remove(path: str) -> None:
        assert dav.delete(nextcloud.dav_path(admin, path)).status_code == 204

    async def body(files: WebDAVClient) -> None:
        answers = KeptAnswers()
        await list_folder(files, "Bytes", top=5, answers=answers)
        assert len(parsed) == 31
        for step, change, anew in (
            ("added", lambda: nextcloud.put_file(admin, "Bytes/new.txt", b"n"), {"", "new.txt"}),
            ("changed", lambda: nextcloud.put_file(admin, "Bytes/07.txt", b"seven"), {"", "07.txt"}),
            ("removed", lambda: remove("Bytes/12.txt"), {""}),
        ):
            await asyncio.to_thread(change)
            parsed.clear()
            seen = await list_folder(files, "Bytes", top=50, answers=answers)
            if nextcloud.kind == "real":  # the double writes its answers otherwise
                assert set(parsed) == anew, step
            fresh = await list_folder(files, "Bytes", top=50)
            assert _shown(seen) == _shown(fresh), step
            assert seen.total == fresh.total, step

    try:
        _run(nextcloud, body)
    finally:
        dav.close()


def test_a_kept_listing_is_never_given_to_a_credential_nextcloud_refuses(nextcloud: Nextcloud) -> None:
    nextcloud.put_file(nextcloud.admin, "Mine/secret.txt", b"s")

    async def main() -> None:
        answers = KeptAnswers()
        async with _files(nextcloud) as files:
            await list_folder(files, "Mine", top=10, answers=answers)
        assert len(answers) == 1
        http = NextcloudHTTP(nextcloud.url)
        try:  # the same user id, a password Nextcloud refuses
            wrong = WebDAVClient(http, BasicCredential(nextcloud.admin.user, "not-the-password"), "admin")
            with pytest.raises(NextcloudHTTPError) as refused:
                await list_folder(wrong, "Mine", top=10, answers=answers)
        finally:
            await http.aclose()
        assert refused.value.status == 401

    asyncio.run(main())


def test_a_folder_too_large_to_keep_is_streamed_holding_only_the_page(nextcloud: Nextcloud) -> None:
    for i in range(9):
        nextcloud.put_file(nextcloud.admin, f"Large/{8 - i}.txt", b"l")
    nextcloud.make_folder(nextcloud.admin, "Large/sub")

    async def body(files: WebDAVClient) -> None:
        small = KeptAnswers(max_bytes=4 * 1000)  # a quarter: room for about 5 entries
        cut = await list_folder(files, "Large", top=4, answers=small)
        assert (cut.complete, cut.total, len(small)) == (False, 10, 0)
        assert [e.name for e in cut.entries] == ["sub", "0.txt", "1.txt", "2.txt"]
        whole = await list_folder(files, "Large", top=4, answers=KeptAnswers())
        assert whole.complete
        assert _shown(whole)[:4] == _shown(cut)

    _run(nextcloud, body)


def _serving(nextcloud: Nextcloud) -> Any:
    return running_app(nextcloud.settings())


async def _list(session: Any, path: str, **arguments: Any) -> dict[str, Any]:
    return structured(await session.call_tool("nc_webdav_list_directory", {"path": path, **arguments}))


def test_paging_a_folder_gives_every_entry_once_and_sees_changes(nextcloud: Nextcloud) -> None:
    """37 entries in pages of 6: each exactly once, folders first, the same total on every page;
    a change by another client and one through this server are both in the next listing; a
    page past the end is empty; a file is not a folder."""
    admin = nextcloud.admin
    names = [f"File {i:02} {'é' if i % 3 else 'x'}.txt" for i in range(32)]
    for name in names:
        nextcloud.put_file(admin, f"Paged/{name}", name.encode())
    folders = ["zeta", "Alpha", "beta", "Gamma", "delta"]
    for folder in folders:
        nextcloud.make_folder(admin, f"Paged/{folder}")

    async def main() -> None:
        with _serving(nextcloud) as base:
            async with http_session(f"{base}/mcp") as session:
                seen: list[str] = []
                for offset in range(0, 42, 6):
                    page = await _list(session, "Paged", limit=6, offset=offset)
                    assert page["total"] == 37
                    seen += [e["name"] for e in page["entries"]]
                assert seen == sorted(folders, key=str.casefold) + sorted(names, key=str.casefold)
                assert (await _list(session, "Paged", offset=37))["entries"] == []
                assert (await _list(session, "Paged", offset=10**9))["entries"] == []
                huge = await session.call_tool("nc_webdav_list_directory", {"path": "Paged", "limit": 10**6})
                assert huge.is_error
                a_file = await session.call_tool("nc_webdav_list_directory", {"path": f"Paged/{names[0]}"})
                assert a_file.is_error
                assert "is a file, not a folder" in str(a_file.content)

                await asyncio.to_thread(nextcloud.put_file, admin, "Paged/00 from another client.txt", b"x")
                page = await _list(session, "Paged", limit=6, offset=5)
                assert page["total"] == 38
                assert page["entries"][0]["name"] == "00 from another client.txt"

                created = await session.call_tool(
                    "nc_webdav_create_file", {"path": "Paged/01 through this server.txt", "content": "y"}
                )
                assert not created.is_error
                page = await _list(session, "Paged", limit=6, offset=6)
                assert page["total"] == 39
                assert page["entries"][0]["name"] == "01 through this server.txt"

                deleted = await session.call_tool(
                    "nc_webdav_move_resource",
                    {"source": "Paged/zeta", "destination": "Paged/Alpha/zeta"},
                )
                assert not deleted.is_error
                page = await _list(session, "Paged", limit=6)
                assert page["total"] == 38
                assert "zeta" not in [e["name"] for e in page["entries"]]

    asyncio.run(main())


def test_a_long_listing_reports_progress_to_a_client_that_asks(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_listing, "PROGRESS_EVERY", 5)
    for i in range(12):
        nextcloud.put_file(nextcloud.admin, f"Progress/{i:02}.txt", b"p")
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append((done, total, message))

    async def main() -> None:
        with _serving(nextcloud) as base:
            async with http_session(f"{base}/mcp") as session:
                result = await session.call_tool(
                    "nc_webdav_list_directory", {"path": "Progress"}, progress_callback=progress
                )
                assert structured(result)["total"] == 12
                # a second, unchanged listing is the kept one: nothing is read, nothing reported
                await session.call_tool(
                    "nc_webdav_list_directory", {"path": "Progress"}, progress_callback=progress
                )

    asyncio.run(main())
    assert reports == [(5, None, "5 entries of /Progress read"), (10, None, "10 entries of /Progress read")]


CARD = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:photo-card\r\nFN:Rosa Photo\r\nN:Photo;Rosa;;;\r\n"
    "EMAIL;TYPE=work:rosa@example.org\r\nTEL;TYPE=cell:+49 30 5550101\r\nORG:Garden GmbH\r\n"
    "X-CUSTOM:kept by other apps\r\nPHOTO;ENCODING=b;TYPE=JPEG:" + "QUJD" * 5000 + "\r\nEND:VCARD\r\n"
)


def test_a_contact_search_shows_what_get_shows_without_fetching_the_photo(nextcloud: Nextcloud) -> None:
    nextcloud.put_card(nextcloud.admin, "photo-card.vcf", CARD)

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        try:
            credential = BasicCredential(nextcloud.admin.user, nextcloud.admin.app_password)
            carddav = NextcloudClient(http, credential).carddav
            book = await carddav.address_book("contacts")
            [card] = await carddav.query(book, ["FN"], "rosa photo", shown=vcard.SHOWN_PROPERTIES)
            assert card.has_photo is True
            assert "PHOTO" not in card.vcard
            assert "X-CUSTOM" not in card.vcard
            assert "rosa@example.org" in card.vcard
            assert len(card.vcard) < 1000
        finally:
            await http.aclose()
        with _serving(nextcloud) as base:
            async with http_session(f"{base}/mcp") as session:
                found = structured(await session.call_tool("nc_contacts_search", {"query": "Rosa"}))
                got = structured(await session.call_tool("nc_contacts_get_contact", {"uid": "photo-card"}))
        [shown] = [c for c in found["contacts"] if c["uid"] == "photo-card"]
        assert shown == got
        assert shown["has_photo"] is True
        assert shown["phones"] == [{"value": "+49 30 5550101", "types": ["cell"]}]

    asyncio.run(main())


# per user: the shared conditional listing and the joiner's ETag question; or after its 304 both
# callers' ETag questions and the one full read they share
# per user: the conditional listing both callers share and the joiner's ETag; or, when that was
# answered 304, both callers' ETags and one full read; or, when the kept listing was read within
# its folder's second (ADR 0111), both callers' ETags and one listing they share
ALLOWED = ([207, 207], [207, 207, 207, 304], [207, 207, 207])


def _held_until(answers: KeptAnswers, joined: int, read: Callable[..., Any]) -> Callable[..., Any]:
    async def held(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        deadline = asyncio.get_running_loop().time() + 10
        while answers.flights.joined < joined:
            assert asyncio.get_running_loop().time() < deadline, "nobody joined the read"
            await asyncio.sleep(0.01)
        async for entry in read(*args, **kwargs):
            yield entry

    return held


@pytest.mark.parametrize("nextcloud", ["double"], indirect=True)
def test_two_listings_of_a_changed_folder_read_it_once_and_never_for_another_user(
    nextcloud: Nextcloud,
) -> None:
    """Two calls that both saw the folder's new ETag share one full read (ADR 0069); the same
    folder name of another user is read for that user, and every answer is the current one."""
    assert nextcloud.double is not None
    for login in (nextcloud.admin, nextcloud.alice):
        nextcloud.put_file(login, "Shared/a.txt", login.user.encode())

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        answers = KeptAnswers()
        try:
            admin, alice = [
                await NextcloudClient(http, BasicCredential(who.user, who.app_password)).files()
                for who in (nextcloud.admin, nextcloud.alice)
            ]
            for files in (admin, alice):
                await list_folder(files, "Shared", top=10, answers=answers)  # kept
            for login in (nextcloud.admin, nextcloud.alice):
                nextcloud.put_file(login, "Shared/b.txt", login.user.encode() * 2)  # changed by others
            for files in (admin, alice):  # a full read waits until the other caller joined it
                files.listing = _held_until(answers, 2, files.listing)  # type: ignore[method-assign]
            before = len(nextcloud.double.requests)
            listings = await asyncio.gather(
                *(list_folder(f, "Shared", top=10, answers=answers) for f in (admin, admin, alice, alice))
            )

            def shared_reads() -> list[Any]:
                assert nextcloud.double is not None
                return [
                    r
                    for r in list(nextcloud.double.requests)[before:]
                    if r.method == "PROPFIND" and r.path.rstrip("/").endswith("/Shared")
                ]

            def statuses(user: str) -> list[int]:
                return sorted(r.status for r in shared_reads() if r.user == user)

            # the double records a request once its handler returned, which may be just after the
            # client read the answer: wait (bounded) until both users' requests are recorded
            deadline = asyncio.get_running_loop().time() + 5
            while asyncio.get_running_loop().time() < deadline and not all(
                statuses(u) in ALLOWED for u in ("admin", "alice")
            ):
                await asyncio.sleep(0.01)
            full_reads = shared_reads()
        finally:
            await http.aclose()
        # per user, one of the request patterns of ALLOWED: never a read per caller
        for user in ("admin", "alice"):
            found = sorted(r.status for r in full_reads if r.user == user)
            assert found in ALLOWED, (user, found)
        sizes = [[(e.path, e.size) for e in listing.entries] for listing in listings]
        assert sizes[0] == sizes[1] == [("Shared/a.txt", 5), ("Shared/b.txt", 10)]
        assert sizes[2] == sizes[3] == [("Shared/a.txt", 5), ("Shared/b.txt", 10)]
        assert listings[2].entries[0].etag != listings[0].entries[0].etag

    asyncio.run(main())
