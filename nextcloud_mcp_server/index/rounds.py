"""One sync round of a person's find index, within a time budget (docs/ADR/0072, 0076).

Notes and files share one gate: the notes live in the user's files, so the root's ETag moves with
any note or file; when it equals the one read at the start of the last complete round of these
kinds, they cost that one request. Events and tasks, contacts, Deck cards and Collectives pages
each cost one listing per round when nothing changed (sources.py). An app the user does not have
(Deck, Collectives) is skipped without an error; a refused credential ends the round (the caller
must sign in again); any other error is reported and the round goes on.

The sources are read at the same time (docs/ADR/0089): an unchanged Nextcloud costs one request
per source, all in flight together, so a round costs about one request's time, not six. Only
Collectives must finish before the files (its pages' folder is left out of them).

`synced_at` in the status is when a round over every kind *started*: the index holds every change
made in Nextcloud before that moment (deletions are also caught by the confirmation of each hit).
A round over some kinds only leaves it as it was (it is not a statement about the others).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from nextcloud_mcp_server.index.engine import FindIndex, Status
from nextcloud_mcp_server.index.extract import Limits
from nextcloud_mcp_server.index.sources import sync_boards, sync_books, sync_calendars, sync_pages
from nextcloud_mcp_server.index.sync import NOTES_FOLDER, Round, sync_files, sync_notes
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, NotFound, Unauthorized
from nextcloud_mcp_server.toolsets.collectives.client import CollectivesUnavailable
from nextcloud_mcp_server.toolsets.deck.client import DeckAppMissing
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = ["ALL_KINDS", "ROUND", "fresh", "sync_round"]

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
    """Read what changed in the kinds asked for, within `seconds`, every source at once; errors are
    reported, never fatal, but a refused credential is."""
    started = time.time()
    work = Round(deadline=time.monotonic() + seconds)
    skip: list[str] = []

    async def pages() -> None:
        if "page" in kinds:

            async def read() -> None:
                skip.extend(await sync_pages(index, user, nc, work, limits.max_bytes))

            await _step(work, "collectives", read, app=True)

    async def root_etag() -> str | None:
        # read before notes and files are: a change during the round shows at the next one
        if not kinds & {"note", "file"}:
            return None
        work.requests += 1
        return await (await nc.files()).current_etag("")

    async def pages_then_notes_and_files() -> None:
        _, etag = await asyncio.gather(pages(), root_etag())
        if kinds & {"note", "file"}:
            await _notes_and_files(index, user, nc, kinds & {"note", "file"}, work, skip, limits, etag)

    steps: list[Awaitable[None]] = [pages_then_notes_and_files()]
    if kinds & {"event", "task"}:
        steps.append(_step(work, "calendars", lambda: sync_calendars(index, user, nc, work)))
    if "contact" in kinds:
        steps.append(_step(work, "contacts", lambda: sync_books(index, user, nc, work)))
    if "card" in kinds:
        steps.append(_step(work, "deck", lambda: sync_boards(index, user, nc, work), app=True))
    outcomes = await asyncio.gather(*steps, return_exceptions=True)
    for outcome in outcomes:  # a refused credential first: the caller must sign in again
        if isinstance(outcome, Unauthorized):
            raise outcome
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    error = "; ".join(work.errors)[:1000]
    if kinds >= set(ALL_KINDS):
        await index.set_status(user, synced_at=started, complete=work.complete, error=error)
        return work
    before = await index.status(user)
    if before.synced_at is None:  # the index begins: made, but not every kind read yet
        await index.set_status(user, synced_at=started, complete=False, error=error)
    elif not work.complete:  # what failed is retried by the next round
        await index.set_status(user, synced_at=before.synced_at, complete=False, error=error)
    return work


def fresh(status: Status, window: float, now: float | None = None) -> bool:
    """Whether `status` says a complete round over every kind started within `window` seconds
    (so the index holds every change made in Nextcloud more than `window` seconds ago)."""
    if status.synced_at is None or not status.complete:
        return False
    return 0.0 <= (time.time() if now is None else now) - status.synced_at <= window


async def _notes_and_files(
    index: FindIndex,
    user: str,
    nc: NextcloudClient,
    kinds: set[str],
    work: Round,
    skip: list[str],
    limits: Limits,
    root_etag: str | None,
) -> None:
    files = await nc.files()
    gate = ",".join(sorted(kinds))
    if root_etag and (await index.marks(user, ROUND)).get(gate) == root_etag:
        return
    part = Round(deadline=work.deadline)  # notes and files alone: their gate needs their own completeness
    if "note" in kinds:

        async def notes() -> None:
            notes_path = (await nc.api(NotesClient).settings()).notes_path
            skip.append(notes_path)  # found as notes
            # where a note's file must be for a SEARCH to confirm it (confirm.py)
            await index.set_marks(user, NOTES_FOLDER, {"path": notes_path.strip("/") or None})
            await sync_notes(index, user, nc.api(NotesClient), part)

        await _step(part, "notes", notes)
    if "file" in kinds:
        await _step(part, "files", lambda: sync_files(index, user, files, part, skip=skip, limits=limits))
    await index.set_marks(user, ROUND, {gate: root_etag if part.complete else None})
    work.read += part.read
    work.removed += part.removed
    work.requests += part.requests
    work.errors.extend(part.errors)
    work.complete = work.complete and part.complete
