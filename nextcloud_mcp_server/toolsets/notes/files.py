"""The notes read as what they are: files in the user's notes folder (ADR 0049).

The Notes API does per-note work on every listing (favorite tag, share types, its own change
table) and reads every file for a search: at 5,000 notes a listing without content costs
Nextcloud seconds, one with content tens of seconds. The same facts come cheaper from WebDAV:

- a note is a file below the notes folder (Notes setting `notesPath`) whose extension is one of
  txt, org, markdown, md, note or the custom suffix; its id is the file id, its title the file
  name without the extension, its category the folder path below the notes folder; folders whose
  name starts with '.' (the Text editor's attachment folders) hold no notes (Notes 6; Notes 4.13
  also counts notes in them);
- one DASL SEARCH over the folder answers every note's id, last change and favorite flag from
  Nextcloud's file cache (one database query; `oc:favorite` is the same "files" favorite tag the
  Notes app sets);
- the folder as one zip (`GET` with `Accept: application/zip`, Nextcloud 30 and later) carries
  every note's text in one answer; afterwards only the notes whose file ETag changed are read
  again, one by one (up to MAX_REFETCH).

Answers are kept per user (`kept.py`) and revalidated with the caller's credential before use:
the listing by the folder's ETag (any change below it, a rename included, changes it) together
with the ids of the favorites (a favorite toggle does not change any ETag), the texts by the
folder's ETag read before the listing they belong to. Whatever Nextcloud refuses here (no
SEARCH, no zip, a folder too big) raises `NotesFilesUnavailable`, and the caller falls back to
the Notes API; a refused zip is not asked again for an hour.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import TypeVar
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav.file_search import search_request
from nextcloud_mcp_server.nextcloud.dav.xml import DAV, NC_ORG, parse_multistatus, read_multistatus_batches
from nextcloud_mcp_server.nextcloud.errors import NextcloudError, NotFound
from nextcloud_mcp_server.nextcloud.folding import fold
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.kept import KeptAnswers
from nextcloud_mcp_server.nextcloud.models import NoteSettings
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.toolsets.notes.file_notes import (
    MAX_ZIP_BYTES,
    FoundFile,
    ListedNotes,
    NoteRow,
    NotesFilesUnavailable,
    found_file,
    note_row,
    note_text,
    unzip_notes,
)

__all__ = [
    "MAX_NOTES",
    "MAX_REFETCH",
    "KeptTexts",
    "NoteFiles",
    "NotesFiles",
    "NotesFilesUnavailable",
    "both",
]

MAX_NOTES = 20_000  # notes read from one SEARCH; a bigger folder is read through the Notes API
ZIP_RETRY_SECONDS = 3600.0  # a Nextcloud that gave no zip is not asked again for this long
MAX_REFETCH = 32  # notes changed since the texts were kept, read one by one; more: one zip
_SETTINGS = "notes-settings"  # the Notes settings last told (a guess checked each time: folder.py)


A = TypeVar("A")
B = TypeVar("B")


async def both(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Both at once; when one fails, the other is still awaited (no request is left running
    unowned), then the first failure is raised."""
    one, two = await asyncio.gather(first, second, return_exceptions=True)
    for result in (one, two):
        if isinstance(result, BaseException):
            raise result
    return one, two  # type: ignore[return-value]


@dataclass(frozen=True)
class NoteFiles:
    """Every note, newest first, each note's file path below the notes folder and file ETag (None
    when the listing did not ask for them), and the folder's ETag read before the listing (the
    listing is at least as new as it)."""

    notes: ListedNotes
    paths: dict[int, str]
    etags: dict[int, str] | None
    folder_etag: str


@dataclass
class KeptTexts:
    """The notes' texts by path, the file ETag each was read at (or before), and the texts
    folded for matching, filled as they are first asked for."""

    texts: dict[str, str]
    etags: dict[str, str]
    folded: dict[str, str] = field(default_factory=dict)

    def folded_text(self, path: str) -> str:
        found = self.folded.get(path)
        if found is None:
            found = self.folded[path] = fold(self.texts.get(path, ""))
        return found


_FILES_ONLY = "<d:not><d:is-collection/></d:not>"
_FAVORITES = (
    f"<d:and>{_FILES_ONLY}<d:eq><d:prop><oc:favorite/></d:prop><d:literal>1</d:literal></d:eq></d:and>"
)
_PROPFIND_ETAG = (
    f'<?xml version="1.0"?><d:propfind xmlns:d="{DAV}"><d:prop><d:getetag/></d:prop></d:propfind>'
)


class NotesFiles:
    """One user's notes folder over WebDAV, with kept answers (see the module's docstring)."""

    def __init__(
        self,
        http: NextcloudHTTP,
        credential: Credential | None,
        dav_user: Callable[[], Awaitable[str]],
        answers: KeptAnswers,
    ) -> None:
        self._http = http
        self._credential = credential
        self._dav_user = dav_user
        self._answers = answers
        self._user = credential.user_id if credential is not None else ""

    async def _root(self, notes_path: str) -> str:
        """The notes folder's decoded DAV path, e.g. /remote.php/dav/files/alice/Notes."""
        try:
            folder = paths.clean(notes_path)
        except ValueError as exc:
            raise NotesFilesUnavailable(f"notes path {notes_path!r}: {exc}") from None
        if not folder:
            raise NotesFilesUnavailable("the notes folder is the home folder")
        return f"/remote.php/dav/files/{await self._dav_user()}/{folder}"

    async def _search(
        self, root: str, where: str, props: str, limit: int
    ) -> tuple[list[tuple[str, FoundFile]], float]:
        """The files found below `root`, and when Nextcloud answered (its `Date`, else ours)."""
        # Nextcloud takes the scope as written, not percent-decoded ("My%20Notes" is not found)
        scope = root.removeprefix("/remote.php/dav")
        found: list[tuple[str, FoundFile]] = []
        try:
            async with self._http.stream(
                "SEARCH",
                "/remote.php/dav/",
                credential=self._credential,
                headers={"Content-Type": "text/xml; charset=utf-8"},
                # every file is read and sorted here, and more than `limit` refused: no order asked
                content=search_request(scope, where, props, limit, newest_first=False),
            ) as response:
                answered = _date(response.headers.get("date"))
                # hrefs carry the path Nextcloud is served under (https://host/nextcloud/...)
                href_root = self._http.base_path + root
                async for items in read_multistatus_batches(response, self._http.host, found_file):
                    below = paths.relatives([item.href for item in items], href_root)
                    found += [
                        (relative, item) for relative, item in zip(below, items, strict=True) if relative
                    ]
        except NextcloudError as exc:
            raise NotesFilesUnavailable(f"SEARCH refused: {exc}") from None
        return found, answered

    async def _folder_etag(self, root: str) -> str:
        try:
            async with self._http.stream(
                "PROPFIND",
                quote(root),
                credential=self._credential,
                headers={"Depth": "0", "Content-Type": "text/xml; charset=utf-8"},
                content=_PROPFIND_ETAG.encode(),
            ) as response:
                etags = [
                    item.text(f"{{{DAV}}}getetag")
                    async for item in parse_multistatus(response, self._http.host)
                ]
        except NextcloudError as exc:
            raise NotesFilesUnavailable(f"PROPFIND refused: {exc}") from None
        if not etags or not etags[0]:
            raise NotesFilesUnavailable("the notes folder has no ETag")
        return etags[0]

    async def listing(
        self, notes_path: str, custom_suffix: str = "", *, file_etags: bool = True
    ) -> NoteFiles:
        """Every note (without content), newest first; a kept one when Nextcloud confirms it:
        the folder's ETag and the favorites' ids (one small SEARCH) are as they were. The first
        time, the favorites come from the listing itself. Without `file_etags` (a listing shown,
        not searched) the SEARCH asks for less: each file's ETag and upload time are what
        `contents` needs, a fifth of the answer at 5,000 notes."""
        root = await self._root(notes_path)
        key = f"notes:list:{root}:{custom_suffix}"
        kept = self._answers.get(self._user, key)
        listed = kept.value if kept is not None and isinstance(kept.value, NoteFiles) else None
        # a listing without file ETags serves one shown, not one searched
        if kept is not None and listed is not None and (listed.etags is not None or not file_etags):
            folder_etag, favorites = await both(
                self._folder_etag(root), self._search(root, _FAVORITES, "<oc:fileid/>", MAX_NOTES + 1)
            )
            if kept.validator == _validator(folder_etag, [item for _, item in favorites[0]]):
                return listed
        else:
            folder_etag = await self._folder_etag(root)  # read before the listing it dates
        # nc:upload_time: Nextcloud's own clock at every WebDAV upload, which no client sets (a
        # file's ETag and mtime follow a client's X-OC-Mtime; ADR 0059)
        props = "<oc:fileid/><d:getlastmodified/><oc:favorite/>"
        if file_etags:
            props += f'<d:getetag/><upload_time xmlns="{NC_ORG}"/>'
        found, answered = await self._search(root, _FILES_ONLY, props, MAX_NOTES + 1)
        if len(found) > MAX_NOTES:
            raise NotesFilesUnavailable(f"more than {MAX_NOTES} files in the notes folder")
        custom = custom_suffix.lstrip(".").lower()
        rows: list[NoteRow] = []
        note_paths: dict[int, str] = {}
        etags: dict[int, str] | None = {} if file_etags else None
        for relative, item in found:
            row = note_row(relative, item, custom)
            if row is None or row[1] in note_paths:
                continue
            rows.append(row)
            note_paths[row[1]] = relative
            if etags is not None:
                etags[row[1]] = _file_etag(item, -row[0], answered)
        rows.sort()  # newest first, then by id (ids are unique: nothing further is compared)
        value = NoteFiles(ListedNotes(rows), note_paths, etags, folder_etag)
        validator = _validator(folder_etag, [item for _, item in found if item.favorite == "1"])
        self._answers.put(self._user, key, validator, value, sum(len(p) + 120 for p in note_paths.values()))
        return value

    async def contents(
        self,
        listing: NoteFiles,
        notes_path: str,
        custom_suffix: str = "",
        read_all: Callable[[], Awaitable[dict[int, str]]] | None = None,
    ) -> KeptTexts:
        """The text of every note of `listing`, by path. Kept by the folder's ETag the listing
        was read at; when that changed, only the notes whose file ETag changed are read again
        (at most MAX_REFETCH, in parallel), else the whole folder once more as one zip, or where
        Nextcloud gives none, through `read_all` (the Notes API)."""
        root = await self._root(notes_path)
        key = f"notes:contents:{root}"
        kept = self._answers.get(self._user, key)
        old = kept.value if kept is not None and isinstance(kept.value, KeptTexts) else None
        if kept is not None and old is not None and kept.validator == listing.folder_etag:
            return old

        async def read() -> KeptTexts:
            return await self._read_contents(root, key, listing, old, custom_suffix, read_all)

        # Callers that saw the same folder ETag share one read (two cold searches: one zip).
        shared: KeptTexts = await self._answers.shared(self._user, key, listing.folder_etag, read)
        return shared

    async def _read_contents(
        self,
        root: str,
        key: str,
        listing: NoteFiles,
        old: KeptTexts | None,
        custom_suffix: str,
        read_all: Callable[[], Awaitable[dict[int, str]]] | None,
    ) -> KeptTexts:
        # a listing without file ETags (not one `listing` gives a search) trusts no kept text
        etags = listing.etags or {}
        wanted = {listing.paths[i]: etags.get(i, "") for i in listing.paths}
        if old is not None:
            changed = [
                p for p, etag in wanted.items() if not etag or old.etags.get(p) != etag or p not in old.texts
            ]
            # The folder changed but no note did, by what Nextcloud says of each: a note rewritten
            # with its old size and time keeps its ETag (and Nextcloud 29's SEARCH gives no upload
            # time), so a change nothing explains is read again whole, never trusted (ADR 0059).
            unexplained = not changed and set(wanted) == set(old.etags)
            if len(changed) <= MAX_REFETCH and not unexplained:
                fresh = await self._read_each(root, changed)
                texts = {
                    p: fresh[p] if p in fresh else old.texts[p]
                    for p in wanted
                    if p in fresh or p in old.texts
                }
                return self._keep(key, listing.folder_etag, KeptTexts(texts, wanted))
        try:
            texts = await self._zip(root, custom_suffix)
        except NotesFilesUnavailable:
            if read_all is None:
                raise
            # no zip (Nextcloud 29): every text through `read_all` once, by note id
            by_id = await read_all()
            if sum(len(t) for t in by_id.values()) > MAX_ZIP_BYTES:
                raise NotesFilesUnavailable("the notes are bigger than the limit") from None
            texts = {listing.paths[i]: t for i, t in by_id.items() if i in listing.paths}
        return self._keep(
            key, listing.folder_etag, KeptTexts({p: texts[p] for p in wanted if p in texts}, wanted)
        )

    def _keep(self, key: str, validator: str, value: KeptTexts) -> KeptTexts:
        # the folded copy, filled on the first search, about doubles what the texts take
        size = 2 * sum(len(t) for t in value.texts.values()) + 100 * len(value.etags)
        self._answers.put(self._user, key, validator, value, size)
        return value

    async def _read_each(self, root: str, changed: list[str]) -> dict[str, str]:
        limit = asyncio.Semaphore(4)

        async def read(path: str) -> tuple[str, str | None]:
            async with limit:
                try:
                    answer = await self._http.request(
                        "GET", quote(f"{root}/{path}"), credential=self._credential
                    )
                except NotFound:
                    return path, None  # gone meanwhile: the next listing will not have it
                except NextcloudError as exc:
                    raise NotesFilesUnavailable(f"reading a note refused: {exc}") from None
                return path, note_text(answer.content)

        found = await asyncio.gather(*(read(p) for p in changed))
        if sum(len(t) for _, t in found if t is not None) > MAX_ZIP_BYTES:
            raise NotesFilesUnavailable("the changed notes are bigger than the limit")
        return {p: t for p, t in found if t is not None}

    async def _zip(self, root: str, custom_suffix: str) -> dict[str, str]:
        refused = self._answers.get(self._user, f"notes:no-zip:{root}")
        if refused is not None and time.monotonic() - float(refused.value) < ZIP_RETRY_SECONDS:
            raise NotesFilesUnavailable("this Nextcloud gives no zip of a folder (asked recently)")
        try:
            return await self._read_zip(root, custom_suffix)
        except NotesFilesUnavailable:
            self._answers.put(self._user, f"notes:no-zip:{root}", "refused", time.monotonic(), 16)
            raise

    async def _read_zip(self, root: str, custom_suffix: str) -> dict[str, str]:
        try:
            async with self._http.stream(
                "GET", quote(root), credential=self._credential, headers={"Accept": "application/zip"}
            ) as response:
                kind = response.headers.get("content-type", "")
                if response.status_code != 200 or "zip" not in kind:
                    raise NotesFilesUnavailable(f"no zip of the notes folder (got {kind or 'nothing'})")
                response.limit = MAX_ZIP_BYTES
                body = await response.read()
        except NextcloudError as exc:
            raise NotesFilesUnavailable(f"zip refused: {exc}") from None
        return unzip_notes(body, custom_suffix.lstrip(".").lower())

    def last_settings(self) -> NoteSettings | None:
        """The Notes settings this user's last listing was asked beside (folder.py)."""
        seen = self._answers.get(self._user, _SETTINGS)
        return seen.value if seen is not None and isinstance(seen.value, NoteSettings) else None

    def remember_settings(self, settings: NoteSettings) -> None:
        self._answers.put(self._user, _SETTINGS, "told", settings, 64 + len(settings.notes_path))

    def forget(self) -> None:
        """Drop what is kept for this user (after a change made through this server)."""
        self._answers.forget_user(self._user, "notes:")


def _file_etag(item: FoundFile, modified: int, answered: float) -> str:
    """What a note's text is kept by: its file ETag and upload time, or "" (read again next time)
    for a file changed within two seconds of the answer. Nextcloud keeps a file's ETag when it is
    written again within the same second (recorded on 29), so a text read then may go stale
    under the same ETag."""
    uploaded = item.uploaded or ""
    recent = max(modified, ascii_number(uploaded) or 0) >= answered - 2
    etag = item.etag or ""
    return "" if recent or not etag else f"{etag}|{uploaded}"


def _validator(folder_etag: str, favorites: list[FoundFile]) -> str:
    """What dates a kept listing: the folder's ETag, and the ids of the favorite files in it (a
    favorite toggle changes no ETag)."""
    ids = sorted(item.file_id or "" for item in favorites)
    return f"{folder_etag}|{hashlib.sha256(','.join(ids).encode()).hexdigest()}"


def _date(value: str | None) -> float:
    """An HTTP date as Unix time; this machine's clock when there is none."""
    try:
        return parsedate_to_datetime(value or "").timestamp()
    except (TypeError, ValueError):
        return time.time()
