"""A kept folder listing is asked again with If-Modified-Since before its ETag is (ADR 0094), or,
when the listing was read within the second of its folder's last change, asked whole beside its
ETag (ADR 0109, 0111): on
the double, the real Nextcloud 29 and the real 34, because whether Nextcloud answers a folder's
PROPFIND 304 is its own behaviour (Sabre's, before any listing work) and both versions must show
it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from nextcloud_mcp_server.nextcloud.auth import BasicCredential
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav import folder_listing
from nextcloud_mcp_server.nextcloud.dav.folder_listing import FolderListing, list_folder
from nextcloud_mcp_server.nextcloud.dav.webdav import WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import Unauthorized
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from tests.backends import Nextcloud
from tests.targets import ON_THE_DOUBLE

pytestmark = pytest.mark.integration


def _shown(listing: FolderListing) -> list[tuple[Any, ...]]:
    return [(e.path, e.kind, e.size, e.modified, e.etag, e.mime) for e in listing.entries]


class _Requests:
    """What a client's requests were, in order: `sent PROPFIND 0`, `sent PROPFIND 1 if-modified`
    when one goes out, `answered ... <status>` when its answer begins."""

    def __init__(self, http: NextcloudHTTP) -> None:
        self.events: list[str] = []
        original = http.stream

        @asynccontextmanager
        async def stream(method: str, path: str, **kwargs: Any) -> AsyncIterator[Any]:
            headers = kwargs.get("headers") or {}
            condition = " if-modified" if "If-Modified-Since" in headers else ""
            name = f"{method} {headers.get('Depth', '')}{condition}"
            self.events.append(f"sent {name}")
            async with original(method, path, **kwargs) as response:
                self.events.append(f"answered {name} {response.status_code}")
                yield response

        http.stream = stream  # type: ignore[method-assign]

    def sent(self) -> list[str]:
        return [e for e in self.events if e.startswith("sent")]


def _kept_as(
    answers: KeptAnswers,
    files: WebDAVClient,
    folder: str,
    *,
    read_at: float,
    modified: datetime | None = None,
) -> None:
    """The kept listing of `folder` as if it was read at `read_at` and (when given) its folder's
    mtime were `modified`."""
    key = folder_listing.KEY_PREFIX + folder
    kept = answers.get(files.user_id, key)
    assert kept is not None
    held: FolderListing = kept.value
    itself = held.itself if modified is None else replace(held.itself, modified=modified)
    answers.put(files.user_id, key, kept.validator, replace(held, itself=itself, read_at=read_at), kept.size)


def test_a_changed_folder_costs_one_conditional_listing_and_an_unchanged_one_a_304_and_its_etag(
    nextcloud: Nextcloud,
) -> None:
    """Nextcloud answers the conditional listing 304 while the folder's mtime has not moved; then
    the ETag is asked, and decides. A changed folder whose mtime moved costs the one request of a
    plain listing. When the mtime did not move (a change within the same second, an mtime a client
    set) the ETag still tells: the folder is read again and the answer equals a fresh one."""
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Both/a.txt", b"a")
    nextcloud.put_file(admin, "Both/b.txt", b"b")

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        requests = _Requests(http)
        try:
            files = await NextcloudClient(http, BasicCredential(admin.user, admin.app_password)).files()
            answers = KeptAnswers()
            first = await list_folder(files, "Both", top=50, answers=answers)
            assert first.itself.modified is not None
            assert first.read_at > first.itself.modified.timestamp() - 5  # by this server's clock
            assert [e.name for e in first.entries] == ["a.txt", "b.txt"]  # shown: both built

            def kept_with(modified: datetime, read_at: float | None = None) -> None:
                """The kept listing as if its folder's mtime were `modified`, read at `read_at`
                (by default an hour after it)."""
                moment = modified.timestamp() + 3600 if read_at is None else read_at
                _kept_as(answers, files, "Both", read_at=moment, modified=modified)

            kept_with(first.itself.modified)
            requests.events.clear()
            again = await list_folder(files, "Both", top=50, answers=answers)
            assert again.reused
            assert requests.events == [
                "sent PROPFIND 1 if-modified",
                "answered PROPFIND 1 if-modified 304",  # Nextcloud's answer to the unchanged folder
                "sent PROPFIND 0",
                "answered PROPFIND 0 207",
            ]
            # read within the second of the folder's last change: its ETag and the listing itself
            # go out at once (ADR 0111); the ETag confirms it and dates it, out of that second
            an_hour_ago = first.itself.modified - timedelta(hours=1)
            kept_with(an_hour_ago, read_at=an_hour_ago.timestamp() + 0.5)
            requests.events.clear()
            assert (await list_folder(files, "Both", top=50, answers=answers)).reused
            assert sorted(requests.sent()) == ["sent PROPFIND 0", "sent PROPFIND 1"]
            assert requests.events.index("sent PROPFIND 1") < requests.events.index("answered PROPFIND 0 207")
            requests.events.clear()
            listed = await list_folder(files, "Both", top=50, answers=answers)
            assert requests.sent()[0] == "sent PROPFIND 1 if-modified"  # as for any kept listing
            # read again (its mtime was set an hour back), each entry the one shown before
            assert [e is k for e, k in zip(listed.entries, first.entries, strict=True)] == [True, True]

            kept_with(first.itself.modified - timedelta(hours=1))  # kept an hour ago
            await asyncio.to_thread(nextcloud.put_file, admin, "Both/c.txt", b"c")
            requests.events.clear()
            seen = await list_folder(files, "Both", top=50, answers=answers)
            assert requests.events == ["sent PROPFIND 1 if-modified", "answered PROPFIND 1 if-modified 207"]
            assert not seen.reused
            assert [e.name for e in seen.entries] == ["a.txt", "b.txt", "c.txt"]
            assert seen.itself.modified is not None
            # what Nextcloud sent as before is the kept entry shown then; only c.txt is new (ADR 0104)
            assert [e is k for e, k in zip(seen.entries, first.entries, strict=False)] == [True, True]

            kept_with(seen.itself.modified + timedelta(days=1))  # an mtime the change does not pass
            await asyncio.to_thread(nextcloud.put_file, admin, "Both/d.txt", b"d")
            requests.events.clear()
            after = await list_folder(files, "Both", top=50, answers=answers)
            assert requests.sent() == ["sent PROPFIND 1 if-modified", "sent PROPFIND 0", "sent PROPFIND 1"]
            assert requests.events.index("answered PROPFIND 1 if-modified 304") < requests.events.index(
                "sent PROPFIND 0"
            )
            assert _shown(after) == _shown(await list_folder(files, "Both", top=50))
            assert [e.name for e in after.entries] == ["a.txt", "b.txt", "c.txt", "d.txt"]
            assert (await list_folder(files, "Both", top=50, answers=answers)).reused

            # b.txt rewritten within the kept listing's second (its mtime not passed; Nextcloud 29
            # may keep its ETag then), c.txt renamed, a.txt deleted: never a kept entry for what
            # Nextcloud now sends otherwise
            kept_with(after.itself.modified + timedelta(days=1))
            await asyncio.to_thread(nextcloud.put_file, admin, "Both/b.txt", b"bB")
            dav = nextcloud.http(admin)
            try:
                target = nextcloud.url + nextcloud.dav_path(admin, "Both/e.txt")
                moved = dav.request(
                    "MOVE", nextcloud.dav_path(admin, "Both/c.txt"), headers={"Destination": target}
                )
                assert moved.status_code == 201
                assert dav.delete(nextcloud.dav_path(admin, "Both/a.txt")).status_code == 204
            finally:
                dav.close()
            changed = await list_folder(files, "Both", top=50, answers=answers)
            assert not changed.reused
            assert _shown(changed) == _shown(await list_folder(files, "Both", top=50))
            assert [e.name for e in changed.entries] == ["b.txt", "d.txt", "e.txt"]
            assert (changed.entries[0].size, after.entries[1].size) == (2, 1)
            assert changed.entries[0] is not after.entries[1]
            assert changed.entries[1] is after.entries[3]  # d.txt, unchanged
        finally:
            await http.aclose()

    asyncio.run(main())


def test_a_change_within_the_second_of_the_kept_listing_costs_one_round_trip(nextcloud: Nextcloud) -> None:
    """A file added in the second the kept listing was read leaves the folder's mtime as it was:
    the listing itself goes out with the ETag question, and its answer is the new listing."""
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Quick/a.txt", b"a")

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        requests = _Requests(http)
        try:
            files = await NextcloudClient(http, BasicCredential(admin.user, admin.app_password)).files()
            answers = KeptAnswers()
            first = await list_folder(files, "Quick", top=50, answers=answers)
            assert first.itself.modified is not None
            _kept_as(answers, files, "Quick", read_at=first.itself.modified.timestamp() + 0.5)
            await asyncio.to_thread(nextcloud.put_file, admin, "Quick/b.txt", b"b")
            requests.events.clear()
            changed = await list_folder(files, "Quick", top=50, answers=answers)
            assert not changed.reused
            assert [e.name for e in changed.entries] == ["a.txt", "b.txt"]
            assert sorted(requests.sent()) == ["sent PROPFIND 0", "sent PROPFIND 1"]  # at once
            assert requests.events.index("sent PROPFIND 1") < requests.events.index("answered PROPFIND 0 207")
        finally:
            await http.aclose()

    asyncio.run(main())


@ON_THE_DOUBLE
def test_a_caller_that_joined_a_refused_listing_asks_with_its_own_credential(nextcloud: Nextcloud) -> None:
    """Two calls of one user at once share one conditional listing; when Nextcloud refuses the
    credential of the call that sent it, that call fails (its grant is what is wrong) and the
    other asks again with its own, getting the folder as it is now, never the other's failure."""
    admin = nextcloud.admin
    nextcloud.put_file(admin, "Mine/a.txt", b"a")

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        try:
            good = WebDAVClient(http, BasicCredential(admin.user, admin.app_password), admin.user)
            refused = WebDAVClient(http, BasicCredential(admin.user, "not-the-password"), admin.user)
            answers = KeptAnswers()
            first = await list_folder(good, "Mine", top=50, answers=answers)
            assert first.itself.modified is not None
            kept = answers.get(admin.user, folder_listing.KEY_PREFIX + "Mine")
            assert kept is not None
            old = FolderListing(
                replace(first.itself, modified=first.itself.modified - timedelta(hours=1)),
                first.entries,
                first.total,
                True,
            )
            answers.put(admin.user, folder_listing.KEY_PREFIX + "Mine", kept.validator, old, kept.size)
            await asyncio.to_thread(nextcloud.put_file, admin, "Mine/b.txt", b"b")
            failed, listed = await asyncio.gather(
                list_folder(refused, "Mine", top=50, answers=answers),
                list_folder(good, "Mine", top=50, answers=answers),
                return_exceptions=True,
            )
            assert isinstance(failed, Unauthorized)
            assert isinstance(listed, FolderListing)
            assert answers.flights.joined == 1  # the good call joined the refused one's listing
            assert [e.name for e in listed.entries] == ["a.txt", "b.txt"]
        finally:
            await http.aclose()

    asyncio.run(main())


@ON_THE_DOUBLE
def test_a_fresh_unchanged_folder_reports_no_progress_even_when_its_listing_came_first(
    nextcloud: Nextcloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing asked beside a fresh kept listing's ETag (ADR 0111) is read before it is known
    to be needed. When the ETag then says nothing changed, the client was told of no reading:
    here the ETag is answered only after that listing was read whole (12 entries, progress every
    5), the order a slow ETag answer gives."""
    monkeypatch.setattr(folder_listing, "PROGRESS_EVERY", 5)
    admin = nextcloud.admin
    for i in range(12):
        nextcloud.put_file(admin, f"Told/{i:02}.txt", b"t")
    reports: list[int] = []

    async def progress(done: int) -> None:
        reports.append(done)

    async def main() -> None:
        http = NextcloudHTTP(nextcloud.url)
        try:
            files = await NextcloudClient(http, BasicCredential(admin.user, admin.app_password)).files()
            answers = KeptAnswers()
            first = await list_folder(files, "Told", top=50, answers=answers, progress=progress)
            assert reports == [5, 10]
            assert first.itself.modified is not None
            _kept_as(answers, files, "Told", read_at=first.itself.modified.timestamp() + 0.5)
            started, etag = answers.flights.started, files.current_etag

            async def late_etag(path: str) -> str | None:
                deadline = asyncio.get_running_loop().time() + 10
                while answers.flights.started == started or len(answers.flights):
                    assert asyncio.get_running_loop().time() < deadline, "the listing was never read"
                    await asyncio.sleep(0.01)
                return await etag(path)

            files.current_etag = late_etag  # type: ignore[method-assign]
            reports.clear()
            again = await list_folder(files, "Told", top=50, answers=answers, progress=progress)
            assert again.reused
            assert reports == []
        finally:
            await http.aclose()

    asyncio.run(main())
