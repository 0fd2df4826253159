"""One folder's entries, sorted, kept with the folder's ETag so an unchanged folder is not read
again.

Nextcloud can only list a folder's own entries whole (PROPFIND Depth 1; a SEARCH ignores the
scope's depth), so a page of a 10,000-entry folder costs the whole folder. The sorted listing
is therefore kept (`kept.KeptAnswers`, per user and folder) with the ETag the folder had in that
answer. The next listing of the folder, any page of it, first asks Nextcloud with the caller's
own credential for the folder's ETag now (a depth-0 PROPFIND of one property, a few hundred
bytes); only if it is the same is the kept listing used. Before that question goes the listing
itself with `If-Modified-Since` the kept folder's mtime: Nextcloud answers it 304 at once while
the folder's mtime has not moved (then the ETag is asked), so a changed folder costs the one
request of a plain listing, an unchanged one two small answers (ADR 0094). A folder's mtime is
whole seconds: a change made in the same second as the folder's last change leaves it as it
was, and only the ETag tells. So when the kept listing was read within that second (by this
server's clock, a second allowed for Nextcloud's), the ETag is asked beside the listing itself,
unconditional (ADR 0109, 0111): a changed folder costs one round trip; an unchanged one is
confirmed by the ETag, and the kept listing is dated by that question, out of the second.
Nextcloud gives a folder a new ETag when an entry in it, or below it, is added, removed, renamed
or changed (checked on 29 and 34, `tests/toolsets/files/test_folder_listings.py`), and it mixes
in the ETags of shares mounted in it.
What a listing shows is only what moves that ETag (name, kind, size, modification time, ETag,
type); a property that does not move it (favorite, tags, shares) is not shown, and must not be
added to a kept listing.

A listing's entries are built when first read (`ListedEntries`): a page of a 10,000-entry folder
builds the page's entries; the others are only sorted, by name (ADR 0110). A changed folder's
answer is read against the kept listing: only the responses whose bytes the kept answer did not
hold are parsed (ADR 0116), and an entry Nextcloud sends exactly as in the kept answer is the kept
entry, if that one was built (ADR 0104).

A folder too large to keep (a quarter of the budget of kept answers, about 17,000 entries of
the default 128 MiB, `NEXTCLOUD_KEPT_ANSWERS_MB`) is streamed as before: only the first `top`
entries in listing order are held.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from datetime import datetime

from nextcloud_mcp_server.nextcloud.dav.files import EntryKey, ListedEntries, Row, entry_at, listing_row
from nextcloud_mcp_server.nextcloud.dav.response_bytes import AnswerBytes, Responses
from nextcloud_mcp_server.nextcloud.dav.webdav import NotModified, WebDAVClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError
from nextcloud_mcp_server.nextcloud.flights import drop
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.models import FileEntry

__all__ = ["KEY_PREFIX", "FolderListing", "forget_listings", "list_folder"]

KEY_PREFIX = "files:list:"
# What one kept entry holds in memory beyond its path (counted three times: the path, its name
# and the href of its key): 1,813 bytes measured with tracemalloc for 23-character paths when
# every entry was built and kept beside its key; a row not yet built holds less. Kept answers are
# bounded by memory, so this is counted, not the ~400 bytes Nextcloud sends per entry.
_ENTRY_BYTES = 1850
PROGRESS_EVERY = 2000
# a kept listing read less than this after its folder's mtime may miss a change made in the same
# second: the mtime's whole second, and one more for this server's clock against Nextcloud's
_SAME_SECOND = 2.0

Progress = Callable[[int], Awaitable[None]]


@dataclass(frozen=True)
class FolderListing:
    """A folder's entries in listing order: all of them, or (`complete` False) the first `top`."""

    itself: FileEntry
    entries: ListedEntries
    total: int
    complete: bool
    reused: bool = False  # the kept listing, after Nextcloud confirmed the folder's ETag
    read_at: float = 0.0  # when its request was sent, by this server's clock (epoch s; 0: unknown)
    # its answer's responses by their bytes, for the next read of a changed folder (ADR 0116)
    responses: Responses[tuple[EntryKey, str | None]] | None = None

    def confirmed(self) -> FolderListing:
        """This kept listing as a call's answer, after Nextcloud confirmed the folder's ETag."""
        return FolderListing(self.itself, self.entries, self.total, True, reused=True)


def _size(path: str) -> int:
    return _ENTRY_BYTES + 3 * len(path)


async def list_folder(
    files: WebDAVClient,
    path: str,
    *,
    top: int,
    answers: KeptAnswers | None = None,
    progress: Progress | None = None,
) -> FolderListing:
    """The entries of the folder at `path` (a file answers with `itself` a file and no entries)."""
    key = KEY_PREFIX + path
    kept = answers.get(files.user_id, key) if answers is not None else None
    if kept is None or answers is None:
        return await _read(files, path, key, top=top, answers=answers, progress=progress)
    held: FolderListing = kept.value
    since = held.itself.modified
    if since is not None and 0 < held.read_at < since.timestamp() + _SAME_SECOND:
        return await _fresh(files, path, key, top, answers, progress, kept.validator, kept.size, held)
    return await _confirm_or_read(files, path, key, top, answers, progress, kept.validator, held)


async def _fresh(
    files: WebDAVClient,
    path: str,
    key: str,
    top: int,
    answers: KeptAnswers,
    progress: Progress | None,
    validator: str,
    size: int,
    held: FolderListing,
) -> FolderListing:
    """A kept listing read within the second of its folder's last change: a change made in that
    second leaves the folder's mtime as it was, so a conditional listing's 304 could not tell
    (ADR 0109). The folder's ETag and the listing itself are asked at once (ADR 0111): a changed
    folder is the listing, in one round trip; an unchanged one is confirmed by its ETag, the
    listing dropped, and the kept listing is then dated by that question, so it is within its
    folder's second no longer and the next call asks as for any other."""
    asked = time.time()
    led = False
    changed = False

    async def report(done: int) -> None:
        # the listing is asked before it is known to be needed: its progress is told only once
        # the ETag said the folder changed (an unchanged folder's call reads nothing, for the
        # client, and reports nothing)
        if changed and progress is not None:
            await progress(done)

    async def whole() -> FolderListing:
        nonlocal led
        led = True
        told = report if progress is not None else None
        return await _read(files, path, key, top=top, answers=answers, progress=told, held=held)

    # callers holding the same kept listing at the same time share one listing; one that joined
    # takes it only for the ETag it confirms itself (below, ADR 0069)
    reading = asyncio.create_task(answers.shared(files.user_id, f"{key}|{top}|fresh", validator, whole))
    try:
        now = await files.current_etag(path)  # raises NotFound when the folder is gone
        if now != validator:
            changed = True
            try:
                found: FolderListing = await reading
            except NextcloudError:
                if led:
                    raise  # this caller's own request failed
            else:
                if led or found.itself.etag == now:
                    return found
    finally:
        await drop(reading)  # its answer was used, raised, or is not needed any more
    if now == validator:
        answers.put(files.user_id, key, validator, replace(held, read_at=asked), size)
        return held.confirmed()
    # the listing joined was another caller's, and failed or is not of the state this one saw
    return await _read(files, path, key, top=top, answers=answers, progress=progress, held=held)


async def _confirm_or_read(
    files: WebDAVClient,
    path: str,
    key: str,
    top: int,
    answers: KeptAnswers,
    progress: Progress | None,
    validator: str,
    held: FolderListing,
) -> FolderListing:
    """The kept `held` if Nextcloud confirms its ETag, else the folder read again."""
    since = held.itself.modified
    # First the listing itself, on condition that the folder's mtime moved past the kept one's
    # (ADR 0094): Nextcloud answers 304 before any listing work otherwise, and a changed folder
    # costs the one request a plain listing does. Only on a 304 is the ETag asked, and only the
    # ETag decides: the mtime is whole seconds and a client may set it, so a 304 with a new ETag
    # reads the folder again.
    found: FolderListing | None = None
    led = False
    if since is not None:

        async def if_modified() -> FolderListing | None:
            nonlocal led
            led = True
            return await _read_if_modified(
                files, path, key, top=top, answers=answers, progress=progress, since=since, held=held
            )

        # callers holding the same kept listing at the same time share one conditional listing;
        # one that joined takes it only for the ETag it confirms itself (below, ADR 0069)
        basis = f"{validator}|{since.isoformat()}"
        try:
            found = await answers.shared(files.user_id, f"{key}|{top}|if-modified", basis, if_modified)
        except NextcloudError:
            if led:
                raise  # this caller's own request failed: a refused credential, a folder gone
            found = None  # another caller's request failed: this one asks with its own below
        if found is not None and led:
            return found  # this caller's own request, sent after its call began
    # current_etag raises NotFound when the folder is gone
    now = await files.current_etag(path)
    if now == validator:
        return held.confirmed()
    if found is not None and found.itself.etag == now:
        return found  # the listing joined is of the state this caller confirmed

    async def read() -> FolderListing:
        return await _read(files, path, key, top=top, answers=answers, progress=progress, held=held)

    if now:  # the folder changed: callers that saw the same new ETag share one read (ADR 0069)
        shared: FolderListing = await answers.shared(files.user_id, f"{key}|{top}", now, read)
        return shared
    return await read()


async def _read_if_modified(
    files: WebDAVClient,
    path: str,
    key: str,
    *,
    top: int,
    answers: KeptAnswers,
    progress: Progress | None,
    since: datetime,
    held: FolderListing,
) -> FolderListing | None:
    """The listing, or None when Nextcloud says the folder's mtime is not later than `since`."""
    try:
        return await _read(
            files, path, key, top=top, answers=answers, progress=progress, since=since, held=held
        )
    except NotModified:
        return None


async def _read(
    files: WebDAVClient,
    path: str,
    key: str,
    *,
    top: int,
    answers: KeptAnswers | None,
    progress: Progress | None,
    since: datetime | None = None,
    held: FolderListing | None = None,
) -> FolderListing:
    """The folder read; with `held`, its kept listing, whose entries and answer bytes are reused
    where Nextcloud sends an entry as it did then."""
    budget = answers.max_bytes // 4 if answers is not None else 0
    # the answer's bytes are held up to a quarter of the folder's budget: a listing that may be
    # kept sends about 400 bytes per entry, and is counted at more than 1,850 (`_ENTRY_BYTES`)
    before = held.responses if held is not None else None
    memo = AnswerBytes(before, budget // 4) if answers is not None else None
    itself: FileEntry | None = None
    rows: list[Row] = []
    total = size = 0
    complete = True
    read_at = time.time()
    async with aclosing(files.listing(path, modified_since=since, memo=memo)) as found:
        async for batch in found:
            for sent, entry_path in batch:
                if entry_path is None:
                    continue  # an href outside the user's files
                if entry_path == path and itself is None:
                    itself = entry_at(sent, entry_path)
                    continue
                rows.append(listing_row(sent, entry_path, total))
                total += 1
                if complete:
                    size += _size(entry_path)
                    complete = size <= budget
                if not complete and len(rows) >= 2 * top + 64:
                    rows.sort()
                    del rows[top:]
                if progress is not None and total % PROGRESS_EVERY == 0:
                    await progress(total)
    if itself is None:  # Nextcloud always answers the folder itself first; a double might not
        itself = await files.stat(path)
    rows.sort()
    if not complete:
        del rows[top:]
    # what this answer sends as the kept listing's answer did is that listing's entry
    entries = ListedEntries(rows, held.entries.built() if held is not None else None)
    responses = memo.after if memo is not None and complete else None
    if responses is not None and size + responses.size > budget:
        responses = None  # the listing is kept without them rather than not at all
    listing = FolderListing(itself, entries, total, complete, read_at=read_at, responses=responses)
    if answers is not None:
        if complete and itself.kind == "directory" and itself.etag:
            answers.put(files.user_id, key, itself.etag, listing, size + (responses.size if responses else 0))
        else:
            answers.forget(files.user_id, key)
    return listing


def forget_listings(answers: KeptAnswers, files: WebDAVClient) -> None:
    """After a change made through this server: no kept listing of this user is used again
    without a full read (the ETag check would catch it too; this does not rely on it)."""
    answers.forget_user(files.user_id, KEY_PREFIX)
