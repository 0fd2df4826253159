"""Notes app API v1 (`/index.php/apps/notes/api/v1`).

Behaviour taken from a real Nextcloud 29 with Notes 4.13 (see the recorded fixtures):
- `GET /notes` supports `category`, `exclude` and chunked paging (`chunkSize`, then `chunkCursor`
  from the `X-Notes-Chunk-Cursor` header until it is absent).
- `PUT /notes/{id}` with a stale `If-Match` answers 412 with the *current* note in the body.
- Unknown ids answer 404; deleting twice answers 404 the second time.
- Nextcloud refuses OAuth Bearer tokens on this API with `401 {"message":"CORS requires basic
  auth"}` (fixed only in later releases) but accepts the same token as a Basic password.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import TypeAdapter, ValidationError

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, Credential
from nextcloud_mcp_server.nextcloud.errors import (
    InvalidResponse,
    NotFound,
    Unauthorized,
)
from nextcloud_mcp_server.nextcloud.http import Answer, NextcloudHTTP, json_body, not_json
from nextcloud_mcp_server.nextcloud.models import Note, NoteSettings
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.toolsets.notes.errors import (
    NOTES_APP_MISSING,
    NoteConflict,
    NotesAppMissing,
    bearer_refused_error,
    malformed,
    no_such_note,
)
from nextcloud_mcp_server.toolsets.notes.files import NotesFiles, NotesFilesUnavailable
from nextcloud_mcp_server.toolsets.notes.folder import listing_with_settings
from nextcloud_mcp_server.toolsets.notes.input import (
    InvalidNoteInput,
    check_category,
    check_content,
    check_title,
)
from nextcloud_mcp_server.toolsets.notes.search import NoteSearchHit, rank_note, rank_notes

if TYPE_CHECKING:
    from nextcloud_mcp_server.nextcloud.client import NextcloudClient

__all__ = [
    "NOTES_APP_MISSING",
    "InvalidNoteInput",
    "NoteConflict",
    "NoteSearchHit",
    "NotesAppMissing",
    "NotesClient",
    "Progress",
    "check_category",
    "check_content",
    "check_title",
    "quote_etag",
    "rank_note",
    "rank_notes",
]

# Called while a long read goes on: (notes read so far, how many in all if known).
Progress = Callable[[int, int | None], Awaitable[None]]

API = "/index.php/apps/notes/api/v1"
# One listing answer, parsed and checked in one pass (pydantic's JSON parser builds the notes
# directly: about half the CPU of json.loads followed by a model per note).
_NOTE_LIST = TypeAdapter(list[Note])
_BEARER_REFUSED = "CORS requires basic auth"


# `OCS-APIRequest` tells Nextcloud this is an API client, not a browser: it then skips the
# browser's session cookies (4 set instead of 10), 2-3 ms of a note's GET on 34
_JSON = {"Accept": "application/json", "OCS-APIRequest": "true"}


class NotesClient:
    """The Notes API for one user."""

    def __init__(
        self, http: NextcloudHTTP, credential: Credential | None, files: NotesFiles | None = None
    ) -> None:
        self._http = http
        self._credential = credential
        # the notes as files (WebDAV): the cheap way to list and search them (ADR 0049)
        self.files = files
        # A password, or a token Nextcloud is known to take as one: if the Notes API refuses it,
        # it was rejected, whatever the message says (see `_call`).
        self._password_like = isinstance(credential, BasicCredential) or getattr(
            credential, "basic_for_notes", False
        )

    @classmethod
    def of(cls, nextcloud: NextcloudClient) -> Self:
        """The notes of `nextcloud`'s user, their files found by the DAV user id (`nc.api(NotesClient)`)."""
        files = NotesFiles(nextcloud.http, nextcloud.credential, nextcloud.dav_user_id, nextcloud.answers)
        return cls(nextcloud.http, nextcloud.credential, files)

    @property
    def host(self) -> str:
        return self._http.host

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        json: Any = None,
        accept: frozenset[int] | set[int] = frozenset(),
    ) -> Answer:
        headers = {**_JSON, **(headers or {})}
        bearer_refused = self._http.notes_refuses_bearer or getattr(
            self._credential, "basic_for_notes", False
        )
        if bearer_refused and self._credential is not None:
            self._credential = self._credential.basic_fallback() or self._credential
        try:
            return await self._http.request(
                method,
                f"{API}{path}",
                credential=self._credential,
                params=params,
                headers=headers,
                json=json,
                accept=accept,
            )
        except NotFound as exc:
            # The Notes API answers a missing note in JSON; Nextcloud's own page (HTML, or empty
            # when JSON was asked for) means there is no Notes app for this account (seen on
            # Nextcloud 29 with the app disabled).
            if not exc.body.lstrip().startswith(("{", "[")):
                raise NotesAppMissing(self.host, NOTES_APP_MISSING, status=404, body=exc.body) from None
            raise
        except Unauthorized as exc:
            # Nextcloud's CORS check answers 'CORS requires basic auth' whenever its Basic login
            # fails, e.g. for an app password deleted a moment ago (reproduced on Nextcloud 29):
            # for a password that is a rejected credential, not the Bearer limitation.
            if _BEARER_REFUSED not in exc.body or self._password_like:
                raise
            fallback = self._credential.basic_fallback() if self._credential else None
            if fallback is None:
                raise bearer_refused_error(self.host) from None
        # Nextcloud's CORS middleware refuses Bearer here; it accepts the token as a Basic password.
        try:
            response = await self._http.request(
                method,
                f"{API}{path}",
                credential=fallback,
                params=params,
                headers=headers,
                json=json,
                accept=accept,
            )
        except Unauthorized:
            # Not a revoked credential (it works elsewhere): the grant is kept.
            raise bearer_refused_error(self.host) from None
        # The fallback worked: use it for this client's remaining calls, and tell the others.
        self._credential = fallback
        self._http.notes_refuses_bearer = True
        return response

    def _note(self, payload: Any) -> Note:
        try:
            return Note.model_validate(payload)
        except ValidationError as exc:
            raise malformed(self.host, exc) from None

    def _note_list(self, response: Answer) -> list[Note]:
        try:
            return _NOTE_LIST.validate_json(response.content)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid":
                raise not_json(response, self.host, nested="recursion limit" in first["msg"]) from None
            if first["loc"] == ():
                raise InvalidResponse(self.host, "expected a list of notes from the Notes API") from None
            raise malformed(self.host, exc) from None

    async def iter_notes(
        self,
        *,
        category: str | None = None,
        exclude: Iterable[str] = (),
        chunk_size: int = 200,
        progress: Progress | None = None,
    ) -> AsyncIterator[Note]:
        """Every note, fetched in chunks so memory stays bounded by one chunk. `progress` hears
        after each chunk how many were read and how many there are (the first chunk's length
        plus Nextcloud's `X-Notes-Chunk-Pending`)."""
        params: dict[str, Any] = {"chunkSize": chunk_size}
        if category is not None:
            params["category"] = category
        excluded = ",".join(sorted(set(exclude)))
        if excluded:
            params["exclude"] = excluded
        seen: set[int] = set()
        total: int | None = None
        while True:
            response = await self._call("GET", "/notes", params=params)
            chunk = self._note_list(response)
            pending = response.headers.get("X-Notes-Chunk-Pending", "")
            if total is None and (more := ascii_number(pending)) is not None:
                total = len(chunk) + more
            for note in chunk:
                # The last chunk may repeat ids of pruned notes (id only): yield each note once.
                if note.id not in seen:
                    seen.add(note.id)
                    yield note
            cursor = response.headers.get("X-Notes-Chunk-Cursor")
            if progress is not None:
                await progress(len(seen), total if cursor else len(seen))
            if not cursor:
                return
            params["chunkCursor"] = cursor

    async def list_notes(
        self, *, category: str | None = None, exclude: Iterable[str] = ("content",)
    ) -> list[Note]:
        return [n async for n in self.iter_notes(category=category, exclude=exclude)]

    async def newest(
        self, *, category: str | None = None, progress: Progress | None = None
    ) -> Sequence[Note]:
        """Every note without content (of `category` only, when given), newest first: from the
        notes folder over WebDAV (kept, revalidated; each note built when read), else from the
        Notes API."""
        if self.files is not None:
            try:
                _, listing = await listing_with_settings(self.files, self.settings, file_etags=False)
            except NotesFilesUnavailable:
                pass
            else:
                return listing.notes if category is None else listing.notes.in_category(category)
        notes = [n async for n in self.iter_notes(category=category, exclude=("content",), progress=progress)]
        notes.sort(key=lambda n: (-n.modified, n.id))
        return notes

    async def get(self, note_id: int) -> Note:
        try:
            response = await self._call("GET", f"/notes/{note_id}")
        except NotFound as exc:
            raise no_such_note(self.host, note_id, exc) from None
        note = self._note(json_body(response, self.host))
        etag = etags.plain(response.headers.get("ETag"))
        return note.model_copy(update={"etag": note.etag or etag})

    async def create(
        self, *, title: str, content: str = "", category: str = "", favorite: bool = False
    ) -> Note:
        body = {"title": title, "content": content, "category": category, "favorite": favorite}
        self.forget_kept()
        response = await self._call("POST", "/notes", json=body)
        return self._note(json_body(response, self.host))

    async def update(
        self,
        note_id: int,
        *,
        etag: str | None,
        title: str | None = None,
        content: str | None = None,
        category: str | None = None,
        favorite: bool | None = None,
    ) -> Note:
        """Change the given fields. With `etag`, a concurrent change raises `NoteConflict`."""
        body = {
            k: v
            for k, v in {
                "title": title,
                "content": content,
                "category": category,
                "favorite": favorite,
            }.items()
            if v is not None
        }
        headers = {"If-Match": quote_etag(etag)} if etag else {}
        self.forget_kept()
        try:
            response = await self._call("PUT", f"/notes/{note_id}", json=body, headers=headers, accept={412})
        except NotFound as exc:
            raise no_such_note(self.host, note_id, exc) from None
        payload = json_body(response, self.host)
        if response.status_code == 412:
            raise NoteConflict(self.host, self._note(payload))
        return self._note(payload)

    async def append(
        self,
        note_id: int,
        text: str,
        *,
        separator: str = "\n",
        max_bytes: int | None = None,
        attempts: int = 3,
    ) -> Note:
        """Add `text` at the end. Reads, then writes with `If-Match`; a concurrent change is
        re-read and the append retried, so neither side's text is lost."""
        note = await self.get(note_id)
        for _ in range(attempts):
            current = note.content or ""
            joined = f"{current}{separator if current and not current.endswith(separator) else ''}{text}"
            if max_bytes is not None:
                check_content(joined, max_bytes)
            try:
                return await self.update(note_id, etag=note.etag, content=joined)
            except NoteConflict as conflict:
                note = conflict.current
        raise NoteConflict(self.host, note)

    async def delete(self, note_id: int) -> None:
        self.forget_kept()
        try:
            await self._call("DELETE", f"/notes/{note_id}")
        except NotFound as exc:
            raise no_such_note(self.host, note_id, exc) from None

    async def search(
        self, query: str, *, category: str | None = None, limit: int = 20, progress: Progress | None = None
    ) -> list[NoteSearchHit]:
        """Notes containing every word of `query`; title matches rank above content matches.
        The texts come from one zip of the notes folder (kept, revalidated by its ETag) where
        Nextcloud offers it, else from reading every note through the Notes API."""
        if self.files is not None:
            try:
                return await self._search_files(query, category, limit, progress)
            except NotesFilesUnavailable:
                pass
        hits: list[NoteSearchHit] = []
        async for note in self.iter_notes(category=category, progress=progress):
            hit = rank_note(note, query)
            if hit is not None:
                hits.append(hit)
        hits.sort(key=lambda h: (-h.score, -h.modified, h.id))
        return hits[:limit]

    async def _search_files(
        self, query: str, category: str | None, limit: int, progress: Progress | None
    ) -> list[NoteSearchHit]:
        assert self.files is not None
        settings, listing = await listing_with_settings(self.files, self.settings)
        report = progress or _silent
        await report(0, len(listing.notes))  # reading the texts may take a while the first time

        async def read_all() -> dict[int, str]:
            return {n.id: n.content or "" async for n in self.iter_notes(progress=progress)}

        texts = await self.files.contents(listing, settings.notes_path, settings.custom_suffix, read_all)
        await report(len(listing.notes), len(listing.notes))
        hits: list[NoteSearchHit] = []
        for note in listing.notes:
            if category is not None and note.category != category:
                continue
            path = listing.paths[note.id]
            hit = rank_note(note, query, text=texts.texts.get(path, ""), folded=texts.folded_text(path))
            if hit is not None:
                hits.append(hit)
        hits.sort(key=lambda h: (-h.score, -h.modified, h.id))
        return hits[:limit]

    def forget_kept(self) -> None:
        """Kept listings are stale after this server changed a note (they would be revalidated
        anyway; this spares the check)."""
        if self.files is not None:
            self.files.forget()

    async def settings(self) -> NoteSettings:
        response = await self._call("GET", "/settings")
        return NoteSettings.model_validate(json_body(response, self.host))


async def _silent(done: int, total: int | None) -> None:
    """No one asked for progress."""


def quote_etag(etag: str) -> str:
    """An ETag as an HTTP header value: quoted once, whatever the caller passed."""
    return etags.quoted(etag)
