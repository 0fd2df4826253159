"""Which folder the notes are in, asked beside the listing of it (issue 44, ADR 0094).

The Notes app's settings name the notes folder, and a user may move it at any time, so every
listing asks them. Asked first, they cost a round trip before the folder's own questions; here
they go out together with the listing of the folder the settings named last time in this
process (or the Notes app's default, `Notes`, the first time). That listing is used only when the
settings answer with the same folder and suffix; otherwise it is dropped and the folder they name
is listed. A guess never decides an answer: the settings asked in the same call do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from nextcloud_mcp_server.nextcloud.flights import drop
from nextcloud_mcp_server.nextcloud.models import NoteSettings
from nextcloud_mcp_server.toolsets.notes.files import NoteFiles, NotesFiles

__all__ = ["listing_with_settings"]


async def listing_with_settings(
    files: NotesFiles,
    settings: Callable[[], Coroutine[Any, Any, NoteSettings]],
    *,
    file_etags: bool = True,
) -> tuple[NoteSettings, NoteFiles]:
    """The Notes settings now, and the listing of the folder they name (`NotesFiles.listing`)."""
    guess = files.last_settings() or NoteSettings()
    asked = asyncio.create_task(settings())
    listed = asyncio.create_task(files.listing(guess.notes_path, guess.custom_suffix, file_etags=file_etags))
    try:
        found = await asked
    except BaseException:
        await drop(listed)
        raise
    files.remember_settings(found)
    if (found.notes_path, found.custom_suffix) == (guess.notes_path, guess.custom_suffix):
        return found, await listed
    await drop(listed)  # the folder moved (or the default was not it): list the named one
    return found, await files.listing(found.notes_path, found.custom_suffix, file_etags=file_etags)
