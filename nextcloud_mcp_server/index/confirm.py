"""Never a stale or foreign hit: before hits are shown, Nextcloud confirms with the caller's own
credential that each is still there for them (docs/ADR/0071, 0089). Batched, every kind at once:
one SEARCH for the file hits' names and the note hits' file ids (a file shown at the hit's path,
a note's file shown inside the notes folder, is there); what it did not show is then checked as
before, which decides: notes read by id (or one listing when many), one PROPFIND (Depth 1) per
folder holding file hits; for the other kinds one listing per calendar, address book, board or
collective holding hits (`sources.present`). What Nextcloud no longer shows the caller is
dropped from the answer and from the index."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from nextcloud_mcp_server.index.engine import FindIndex, Hit
from nextcloud_mcp_server.index.sources import present as present_of_kind
from nextcloud_mcp_server.index.sync import NOTES_FOLDER
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav.file_search import files_named
from nextcloud_mcp_server.nextcloud.errors import Forbidden, NextcloudError, NotFound, Unauthorized
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.toolsets.notes.client import NotesClient

__all__ = ["confirmed"]

PARALLEL = 4
FEW_NOTES = 10


async def _notes_present(nc: NextcloudClient, ids: list[int]) -> set[str]:
    if len(ids) > FEW_NOTES:
        return {
            str(n.id) async for n in nc.api(NotesClient).iter_notes(exclude=("content",), chunk_size=100_000)
        }
    slots = asyncio.Semaphore(PARALLEL)

    async def there(note_id: int) -> str | None:
        async with slots:
            try:
                await nc.api(NotesClient).get(note_id)
            except (NotFound, Forbidden):
                return None
            return str(note_id)

    return {found for found in await asyncio.gather(*(there(i) for i in ids)) if found is not None}


async def _searched(nc: NextcloudClient, paths: set[str], note_ids: set[int]) -> dict[str, int | None]:
    """What one SEARCH shows of these files (by name) and notes' files (by id); nothing when it
    fails (the slower checks then decide alone)."""
    try:
        return await files_named(await nc.files(), {p.rpartition("/")[2] for p in paths}, note_ids)
    except Unauthorized:
        raise
    except NextcloudError:
        return {}


async def _folders_present(nc: NextcloudClient, paths: set[str]) -> set[str]:
    """Which of these files their folders still list (one PROPFIND, Depth 1, per folder)."""
    files = await nc.files()
    slots = asyncio.Semaphore(PARALLEL)

    async def listed(folder: str) -> set[str]:
        async with slots:
            try:
                return {e.path async for e in files.iter_directory(folder) if e.kind == "file"}
            except (NotFound, Forbidden):  # the folder is gone, moved or no longer shared
                return set()

    folders = sorted({p.rpartition("/")[0] for p in paths})
    found = await asyncio.gather(*(listed(folder) for folder in folders))
    return set().union(*found) & paths


async def _notes_folder(index: FindIndex, user: str, nc: NextcloudClient, ids: set[int]) -> str | None:
    """Where the Notes app keeps the user's notes, as the last round recorded it; asked of the
    Notes app (and recorded) when no round recorded it yet. None: no notes to confirm."""
    if not ids:
        return None
    recorded = (await index.marks(user, NOTES_FOLDER)).get("path")
    if recorded:
        return recorded
    try:
        found = (await nc.api(NotesClient).settings()).notes_path.strip("/")
    except Unauthorized:
        raise
    except NextcloudError:
        return None  # the notes are read by id instead
    await index.set_marks(user, NOTES_FOLDER, {"path": found or None})
    return found or None


async def _notes_and_files(
    index: FindIndex, user: str, nc: NextcloudClient, notes: list[Hit], files: list[Hit]
) -> set[tuple[str, str]]:
    """One SEARCH first: a file it shows at the hit's path is there, a note whose file it shows
    inside the notes folder is there. The rest are read as before (notes by id, folders listed),
    which decides."""
    paths = {h.key for h in files}
    ids = {n for h in notes if (n := ascii_number(h.key, max_digits=18)) is not None}
    shown, folder = await asyncio.gather(_searched(nc, paths, ids), _notes_folder(index, user, nc, ids))
    found_files = paths & shown.keys()
    found_notes = {
        str(i) for path, i in shown.items() if i in ids and folder and path.startswith(folder + "/")
    }
    rest_ids = sorted(i for i in ids if str(i) not in found_notes)
    rest_paths = paths - found_files

    async def notes_rest() -> set[str]:
        return await _notes_present(nc, rest_ids) if rest_ids else set()

    async def files_rest() -> set[str]:
        return await _folders_present(nc, rest_paths) if rest_paths else set()

    more_notes, more_files = await asyncio.gather(notes_rest(), files_rest())
    return {("note", key) for key in found_notes | more_notes} | {
        ("file", path) for path in found_files | more_files
    }


async def confirmed(
    index: FindIndex, user: str, hits: Sequence[Hit], nc: NextcloudClient
) -> tuple[list[Hit], int]:
    """The hits Nextcloud still shows the caller, and how many were dropped (and unindexed)."""
    notes = [h for h in hits if h.kind == "note"]
    files = [h for h in hits if h.kind == "file"]

    async def of_kind(kind: str) -> set[tuple[str, str]]:
        keys = {h.key for h in hits if h.kind == kind}
        return {(kind, key) for key in await present_of_kind(nc, kind, keys)}

    # every kind at once: a confirmation costs about one request's time (docs/ADR/0089)
    checks = [of_kind(kind) for kind in sorted({h.kind for h in hits} - {"note", "file"})]
    if notes or files:
        checks.append(_notes_and_files(index, user, nc, notes, files))
    present: set[tuple[str, str]] = set().union(*await asyncio.gather(*checks)) if checks else set()
    kept = [h for h in hits if (h.kind, h.key) in present]
    gone = [h for h in hits if (h.kind, h.key) not in present]
    for kind in {h.kind for h in gone}:
        await index.remove(user, kind, [h.key for h in gone if h.kind == kind])
    return kept, len(gone)
