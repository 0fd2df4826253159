"""One sync round of a person's find index, within a time budget (docs/ADR/0072, 0076).

Notes and files share one gate: the notes live in the user's files, so the root's ETag moves with
any note or file; when it equals the one read at the start of the last complete round of these
kinds, they cost that one request. Events and tasks, contacts, Deck cards and Collectives pages
each cost one listing per round when nothing changed (sources.py). An app the user does not have
(Deck, Collectives) is skipped without an error; a refused credential ends the round (the caller
must sign in again); any other error is reported and the round goes on.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from nextcloud_mcp_server.index.engine import FindIndex
from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.sources import sync_boards, sync_books, sync_calendars, sync_pages
from nextcloud_mcp_server.index.sync import Round, sync_files, sync_notes
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, NotFound, Unauthorized
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesUnavailable
from nextcloud_mcp_server.toolsets.deck.client import DeckAppMissing
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = ["ALL_KINDS", "ROUND", "sync_round"]

ROUND = "round"  # the marks' source for the root's ETag at the start of the last complete round
ALL_KINDS = ("note", "file", "event", "task", "contact", "card", "page")


async def _step(work: Round, what: str, step: Callable[[], Awaitable[object]], *, app: bool = False) -> None:
    """Run one source's part of the round. For an app's source (`app`), a listing answered 404 means
    the app is not there for this user: nothing of it to find, and no error."""
    if work.out_of_time():
        return
    try:
        await step()
    except Unauthorized:
        raise
    except (DeckAppMissing, CollectivesUnavailable):
        return
    except NextcloudError as exc:
        if app and isinstance(exc, NotFound):
            return
        work.errors.append(f"{what}: {exc.message}")
        work.complete = False


async def sync_round(
    index: FindIndex, user: str, nc: NextcloudClient, kinds: set[str], seconds: float, limits: Limits
) -> Round:
    """Read what changed in the kinds asked for, within `seconds`; errors are reported, never
    fatal, but a refused credential is."""
    work = Round(deadline=time.monotonic() + seconds)
    skip: list[str] = []
    if "page" in kinds:

        async def pages() -> None:
            skip.extend(await sync_pages(index, user, nc, work, limits.max_bytes))

        await _step(work, "collectives", pages, app=True)
    if kinds & {"event", "task"}:
        await _step(work, "calendars", lambda: sync_calendars(index, user, nc, work))
    if "contact" in kinds:
        await _step(work, "contacts", lambda: sync_books(index, user, nc, work))
    if "card" in kinds:
        await _step(work, "deck", lambda: sync_boards(index, user, nc, work), app=True)
    if kinds & {"note", "file"}:
        await _notes_and_files(index, user, nc, kinds & {"note", "file"}, work, skip, limits)
    await index.set_status(
        user, synced_at=time.time(), complete=work.complete, error="; ".join(work.errors)[:1000]
    )
    return work


async def _notes_and_files(
    index: FindIndex,
    user: str,
    nc: NextcloudClient,
    kinds: set[str],
    work: Round,
    skip: list[str],
    limits: Limits,
) -> None:
    # Read the root's ETag before the round (a change during it shows at the next call).
    files = await nc.files()
    gate = ",".join(sorted(kinds))
    root_etag = await files.current_etag("")
    work.requests += 1
    if root_etag and (await index.marks(user, ROUND)).get(gate) == root_etag:
        return
    complete_before = work.complete
    work.complete = True
    if "note" in kinds:

        async def notes() -> None:
            skip.append((await nc.api(NotesClient).settings()).notes_path)  # found as notes
            await sync_notes(index, user, nc.api(NotesClient), work)

        await _step(work, "notes", notes)
    if "file" in kinds:
        await _step(work, "files", lambda: sync_files(index, user, files, work, skip=skip, limits=limits))
    await index.set_marks(user, ROUND, {gate: root_etag if work.complete else None})
    work.complete = work.complete and complete_before
