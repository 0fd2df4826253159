"""Never a stale or foreign hit: before hits are shown, Nextcloud confirms with the caller's own
credential that each is still there for them (docs/ADR/0071, 0089). Batched: notes read by id
(or one listing when many); file hits by one SEARCH for their names (a file is confirmed when
Nextcloud lists it at its path), and those it did not show by one PROPFIND (Depth 1) per folder
holding them, which decides; for the other kinds one listing per calendar, address book, board
or collective holding hits (`sources.present`). Every kind at once. What Nextcloud no longer
shows the caller is dropped from the answer and from the index."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from nextcloud_mcp_server.index.engine import FindIndex, Hit
from nextcloud_mcp_server.index.sources import present as present_of_kind
from nextcloud_mcp_server.nextcloud.client import NextcloudClient
from nextcloud_mcp_server.nextcloud.dav.file_search import files_named
from nextcloud_mcp_server.nextcloud.errors import Forbidden, NextcloudError, NotFound, Unauthorized
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


async def _files_present(nc: NextcloudClient, paths: set[str]) -> set[str]:
    files = await nc.files()
    try:  # one request for all of them, usually: what it shows at the same path is there
        shown = await files_named(files, {path.rpartition("/")[2] for path in paths}) & paths
    except Unauthorized:
        raise
    except NextcloudError:  # a SEARCH refused or failed: the folders decide alone
        shown = set()
    slots = asyncio.Semaphore(PARALLEL)

    async def listed(folder: str) -> set[str]:
        async with slots:
            try:
                return {e.path async for e in files.iter_directory(folder) if e.kind == "file"}
            except (NotFound, Forbidden):  # the folder is gone, moved or no longer shared
                return set()

    rest = {path.rpartition("/")[0] for path in paths - shown}  # gone, moved, or not searchable
    found = await asyncio.gather(*(listed(folder) for folder in sorted(rest)))
    return shown.union(*found)


async def confirmed(
    index: FindIndex, user: str, hits: Sequence[Hit], nc: NextcloudClient
) -> tuple[list[Hit], int]:
    """The hits Nextcloud still shows the caller, and how many were dropped (and unindexed)."""
    notes = [h for h in hits if h.kind == "note"]
    files = [h for h in hits if h.kind == "file"]

    async def of_notes() -> set[tuple[str, str]]:
        ids = [int(h.key) for h in notes if h.key.isdigit()]
        return {("note", key) for key in await _notes_present(nc, ids)}

    async def of_files() -> set[tuple[str, str]]:
        return {("file", path) for path in await _files_present(nc, {h.key for h in files})}

    async def of_kind(kind: str) -> set[tuple[str, str]]:
        keys = {h.key for h in hits if h.kind == kind}
        return {(kind, key) for key in await present_of_kind(nc, kind, keys)}

    # every kind at once: a confirmation costs about one request's time (docs/ADR/0089)
    checks = [of_kind(kind) for kind in sorted({h.kind for h in hits} - {"note", "file"})]
    checks += [of_notes()] if notes else []
    checks += [of_files()] if files else []
    present: set[tuple[str, str]] = set().union(*await asyncio.gather(*checks)) if checks else set()
    kept = [h for h in hits if (h.kind, h.key) in present]
    gone = [h for h in hits if (h.kind, h.key) not in present]
    for kind in {h.kind for h in gone}:
        await index.remove(user, kind, [h.key for h in gone if h.kind == kind])
    return kept, len(gone)
