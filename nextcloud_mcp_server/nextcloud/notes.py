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

import re
import unicodedata
from collections.abc import AsyncIterator, Iterable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from nextcloud_mcp_server.nextcloud import etags
from nextcloud_mcp_server.nextcloud.auth import BasicCredential, Credential
from nextcloud_mcp_server.nextcloud.errors import (
    BearerRefused,
    InvalidInput,
    InvalidResponse,
    NotFound,
    PreconditionFailed,
    Unauthorized,
)
from nextcloud_mcp_server.nextcloud.http import Answer, NextcloudHTTP, json_body, not_json
from nextcloud_mcp_server.nextcloud.models import Note, NoteSettings
from nextcloud_mcp_server.nextcloud.names import check_visible

__all__ = [
    "NOTES_APP_MISSING",
    "InvalidNoteInput",
    "NoteConflict",
    "NoteSearchHit",
    "NotesAppMissing",
    "NotesClient",
    "check_category",
    "check_content",
    "check_title",
    "quote_etag",
    "rank_notes",
]

API = "/index.php/apps/notes/api/v1"
# One listing answer, parsed and checked in one pass (pydantic's JSON parser builds the notes
# directly: about half the CPU of json.loads followed by a model per note).
_NOTE_LIST = TypeAdapter(list[Note])
_BEARER_REFUSED = "CORS requires basic auth"


def _bearer_refused(host: str) -> BearerRefused:
    return BearerRefused(
        host,
        "the Notes API refuses OAuth Bearer tokens ('CORS requires basic auth', a Nextcloud "
        "limitation fixed in later releases) and did not accept the token as a Basic password "
        "either; use offline access with NEXTCLOUD_CONSENT_PROVIDER=nextcloud-oauth2 or "
        "login-flow-v2, or upgrade Nextcloud",
        status=401,
    )


_JSON = {"Accept": "application/json"}


class InvalidNoteInput(InvalidInput):
    """A title, category or content that would be refused or mangled; nothing was sent."""


class NoteConflict(PreconditionFailed):
    """The note changed since its ETag was read. `current` is the note as it is now."""

    def __init__(self, host: str, current: Note) -> None:
        super().__init__(
            host,
            f"note {current.id} was changed by someone else since it was read "
            f"(its ETag is now {current.etag}); nothing was overwritten",
            status=412,
        )
        self.current = current


class NoteSearchHit(Note):
    """A note that matched a search, with where it matched and a short excerpt."""

    score: float = 0.0
    matched_in: str = "content"
    snippet: str = ""


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_title(title: str) -> str:
    """A usable note title (it becomes a file name), stripped; raises `InvalidNoteInput`."""
    cleaned = title.strip()
    if not cleaned:
        raise InvalidNoteInput("title must not be empty")
    if _CONTROL.search(cleaned):
        raise InvalidNoteInput("title must be one line without control characters")
    check_visible(cleaned, "title")
    if len(cleaned) > 200:
        raise InvalidNoteInput(f"title must be at most 200 characters (got {len(cleaned)})")
    return cleaned


def check_category(category: str) -> str:
    """A category is a folder path below the notes folder: `Work` or `Work/Projects`."""
    cleaned = category.strip()
    if not cleaned:
        return ""
    if _CONTROL.search(cleaned) or "\\" in cleaned:
        raise InvalidNoteInput("category must not contain control characters or backslashes")
    check_visible(cleaned, "category")
    if cleaned.startswith("/") or cleaned.endswith("/"):
        raise InvalidNoteInput("category must not start or end with '/' (use e.g. 'Work/Projects')")
    segments = cleaned.split("/")
    if any(not s.strip() or s.strip() in (".", "..") for s in segments):
        raise InvalidNoteInput("category segments must not be empty, '.' or '..'")
    if len(cleaned) > 255:
        raise InvalidNoteInput("category must be at most 255 characters")
    return "/".join(s.strip() for s in segments)


def check_content(content: str, max_bytes: int) -> str:
    size = len(content.encode("utf-8"))
    if size > max_bytes:
        raise InvalidNoteInput(
            f"content is {size} bytes, over the limit of {max_bytes} (NOTES_MAX_CONTENT_BYTES)"
        )
    return content


class NotesClient:
    """The Notes API for one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential | None) -> None:
        self._http = http
        self._credential = credential
        # A password, or a token Nextcloud is known to take as one: if the Notes API refuses it,
        # it was rejected, whatever the message says (see `_call`).
        self._password_like = isinstance(credential, BasicCredential) or getattr(
            credential, "basic_for_notes", False
        )

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
                raise _bearer_refused(self.host) from None
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
            raise _bearer_refused(self.host) from None
        # The fallback worked: use it for this client's remaining calls, and tell the others.
        self._credential = fallback
        self._http.notes_refuses_bearer = True
        return response

    def _note(self, payload: Any) -> Note:
        try:
            return Note.model_validate(payload)
        except ValidationError as exc:
            raise _malformed(self.host, exc) from None

    def _note_list(self, response: Answer) -> list[Note]:
        try:
            return _NOTE_LIST.validate_json(response.content)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid":
                raise not_json(response, self.host, nested="recursion limit" in first["msg"]) from None
            if first["loc"] == ():
                raise InvalidResponse(self.host, "expected a list of notes from the Notes API") from None
            raise _malformed(self.host, exc) from None

    async def iter_notes(
        self, *, category: str | None = None, exclude: Iterable[str] = (), chunk_size: int = 200
    ) -> AsyncIterator[Note]:
        """Every note, fetched in chunks so memory stays bounded by one chunk."""
        params: dict[str, Any] = {"chunkSize": chunk_size}
        if category is not None:
            params["category"] = category
        excluded = ",".join(sorted(set(exclude)))
        if excluded:
            params["exclude"] = excluded
        seen: set[int] = set()
        while True:
            response = await self._call("GET", "/notes", params=params)
            for note in self._note_list(response):
                # The last chunk may repeat ids of pruned notes (id only): yield each note once.
                if note.id not in seen:
                    seen.add(note.id)
                    yield note
            cursor = response.headers.get("X-Notes-Chunk-Cursor")
            if not cursor:
                return
            params["chunkCursor"] = cursor

    async def list_notes(
        self, *, category: str | None = None, exclude: Iterable[str] = ("content",)
    ) -> list[Note]:
        return [n async for n in self.iter_notes(category=category, exclude=exclude)]

    async def get(self, note_id: int) -> Note:
        try:
            response = await self._call("GET", f"/notes/{note_id}")
        except NotFound as exc:
            raise _no_such_note(self.host, note_id, exc) from None
        note = self._note(json_body(response, self.host))
        etag = etags.plain(response.headers.get("ETag"))
        return note.model_copy(update={"etag": note.etag or etag})

    async def create(
        self, *, title: str, content: str = "", category: str = "", favorite: bool = False
    ) -> Note:
        body = {"title": title, "content": content, "category": category, "favorite": favorite}
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
        try:
            response = await self._call("PUT", f"/notes/{note_id}", json=body, headers=headers, accept={412})
        except NotFound as exc:
            raise _no_such_note(self.host, note_id, exc) from None
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
        try:
            await self._call("DELETE", f"/notes/{note_id}")
        except NotFound as exc:
            raise _no_such_note(self.host, note_id, exc) from None

    async def search(
        self, query: str, *, category: str | None = None, limit: int = 20
    ) -> list[NoteSearchHit]:
        """Notes containing every word of `query`; title matches rank above content matches."""
        hits: list[NoteSearchHit] = []
        async for note in self.iter_notes(category=category):
            hit = rank_note(note, query)
            if hit is not None:
                hits.append(hit)
        hits.sort(key=lambda h: (-h.score, -h.modified, h.id))
        return hits[:limit]

    async def settings(self) -> NoteSettings:
        response = await self._call("GET", "/settings")
        return NoteSettings.model_validate(json_body(response, self.host))


def _fold(text: str) -> str:
    """Case- and accent-insensitive form for matching."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def rank_note(note: Note, query: str) -> NoteSearchHit | None:
    """Score a note against a query, or None when some word of the query is missing."""
    words = [w for w in _fold(query).split() if w]
    if not words:
        return None
    title, content = _fold(note.title), _fold(note.content or "")
    phrase = " ".join(words)
    if not all(w in title or w in content for w in words):
        return None
    in_title = sum(w in title for w in words)
    score = 0.0
    if phrase in title:
        score += 100
    score += 20 * in_title / len(words)
    if phrase in content:
        score += 5
    score += min(sum(content.count(w) for w in words), 20) / 10
    return NoteSearchHit(
        **note.model_dump(exclude={"content"}),
        score=round(score, 2),
        matched_in="title" if in_title else "content",
        snippet=_snippet(note.content or "", words),
    )


def rank_notes(notes: Iterable[Note], query: str) -> list[NoteSearchHit]:
    hits = [h for n in notes if (h := rank_note(n, query)) is not None]
    return sorted(hits, key=lambda h: (-h.score, -h.modified, h.id))


def _snippet(content: str, words: list[str], width: int = 160) -> str:
    folded = _fold(content)
    positions = [p for w in words if (p := folded.find(w)) >= 0]
    start = max(0, min(positions) - width // 4) if positions else 0
    excerpt = content[start : start + width].replace("\n", " ").strip()
    return ("…" if start > 0 else "") + excerpt + ("…" if start + width < len(content) else "")


def quote_etag(etag: str) -> str:
    """An ETag as an HTTP header value: quoted once, whatever the caller passed."""
    return etags.quoted(etag)


def _malformed(host: str, error: ValidationError) -> InvalidResponse:
    """A note of the answer that does not have a note's fields: where, and what is wrong."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the note"
    return InvalidResponse(host, f"the Notes API answered a malformed note ({where}: {first['msg'][:200]})")


NOTES_APP_MISSING = (
    "the Notes app is not installed or not enabled for this account; an administrator enables it "
    "in Nextcloud under Apps (or: occ app:enable notes)"
)


class NotesAppMissing(NotFound):
    """404 from Nextcloud itself, not from the Notes API: the app is not there for this account."""


def _no_such_note(host: str, note_id: int, exc: NotFound) -> NotFound:
    if isinstance(exc, NotesAppMissing):
        return exc
    return NotFound(host, f"note {note_id} does not exist", status=404, body=exc.body)
