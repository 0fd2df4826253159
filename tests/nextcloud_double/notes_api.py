"""Notes API v1 of the double, keeping notes as Markdown files in the user's WebDAV tree.

Like the real Notes app, a note is the file `Notes/<category>/<title>.md`: a note created here is
visible over WebDAV and a Markdown file written over WebDAV is a note. Answers follow the
recordings of a real Nextcloud 29 / Notes 4.13 in `shared/fixtures/nextcloud/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["NotesStore", "notes_endpoint"]

NOT_FOUND = {"errorType": "OCA\\Notes\\Service\\NoteDoesNotExistException"}
API_HEADERS = {
    "X-Notes-API-Versions": "0.2, 1.3, 1.4",
    "Cache-Control": "no-cache, no-store, must-revalidate",
}
_ILLEGAL_TITLE = re.compile(r'[\\/:*?"<>|\x00-\x1f\x7f]')
_ILLEGAL_CATEGORY = re.compile(r'[\\:*?"<>|\x00-\x1f\x7f]')


@dataclass
class StoredNote:
    id: int
    path: Path
    category: str
    title: str


class NotesStore:
    """All users' notes. File ids are tracked by inode, so a MOVE over WebDAV keeps the id."""

    def __init__(self, files_root: Path, notes_folder: str = "Notes") -> None:
        self.files_root = files_root
        self.notes_folder = notes_folder
        self.folders: dict[str, str] = {}  # a user's `notesPath` once set (PUT settings)
        self._ids: dict[tuple[str, int], int] = {}
        self._favorites: set[tuple[str, int]] = set()
        self._next_id = 100
        self._lock = threading.RLock()

    def folder(self, user: str) -> Path:
        path = self.files_root / user / self.folders.get(user, self.notes_folder)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _id_for(self, user: str, path: Path) -> int:
        key = (user, path.stat().st_ino)
        if key not in self._ids:
            self._ids[key] = self._next_id
            self._next_id += 1
        return self._ids[key]

    def scan(self, user: str) -> list[StoredNote]:
        with self._lock:
            folder = self.folder(user)
            notes = []
            for path in sorted(folder.rglob("*")):
                # notes in hidden folders are skipped (Notes 6); a hidden file is still a note
                hidden = any(part.startswith(".") for part in path.relative_to(folder).parts[:-1])
                if path.is_file() and path.suffix in (".md", ".txt") and not hidden:
                    category = path.parent.relative_to(folder).as_posix()
                    category = "" if category == "." else category
                    notes.append(StoredNote(self._id_for(user, path), path, category, path.stem))
            return sorted(notes, key=lambda n: n.id)

    def file_facts(self, user: str, path: Path) -> tuple[int, bool]:
        """A file's id and favorite flag as WebDAV shows them: a note's id is its file id."""
        with self._lock:
            file_id = self._id_for(user, path)
            return file_id, (user, file_id) in self._favorites

    def find(self, user: str, note_id: int) -> StoredNote | None:
        return next((n for n in self.scan(user) if n.id == note_id), None)

    def to_json(self, user: str, note: StoredNote) -> dict[str, Any]:
        content = note.path.read_text(encoding="utf-8")
        modified = int(note.path.stat().st_mtime)
        favorite = (user, note.id) in self._favorites
        etag_source = json.dumps([note.id, note.title, note.category, favorite, modified, content])
        internal = "/" + note.path.relative_to(self.files_root / user).as_posix()
        return {
            "id": note.id,
            "title": note.title,
            "modified": modified,
            "category": note.category,
            "favorite": favorite,
            "readonly": False,
            "internalPath": internal,
            "shareTypes": [],
            "isShared": False,
            "error": False,
            "errorType": "",
            "content": content,
            "etag": hashlib.md5(etag_source.encode(), usedforsecurity=False).hexdigest(),
        }

    def _target(self, user: str, category: str, title: str, current: Path | None = None) -> tuple[Path, str]:
        folder = self.folder(user) / category if category else self.folder(user)
        folder.mkdir(parents=True, exist_ok=True)
        candidate, n = title, 1
        while (folder / f"{candidate}.md").exists() and (folder / f"{candidate}.md") != current:
            n += 1
            candidate = f"{title} ({n})"
        return folder / f"{candidate}.md", candidate

    def create(self, user: str, data: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            content = str(data.get("content") or "")
            title = sanitize_title(str(data.get("title") or "")) or _title_from(content)
            category = sanitize_category(str(data.get("category") or ""))
            path, _ = self._target(user, category, title)
            path.write_text(content, encoding="utf-8")
            _touch(path, data.get("modified"))
            note = self.scan_one(user, path)
            if data.get("favorite"):
                self._favorites.add((user, note.id))
            return self.to_json(user, note)

    def scan_one(self, user: str, path: Path) -> StoredNote:
        note_id = self._id_for(user, path)
        found = self.find(user, note_id)
        assert found is not None
        return found

    def update(self, user: str, note: StoredNote, data: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            path = note.path
            if "content" in data and data["content"] is not None:
                path.write_text(str(data["content"]), encoding="utf-8")
                _touch(path, data.get("modified"))
            title, category = note.title, note.category
            if data.get("title") is not None:
                title = sanitize_title(str(data["title"]))
            if data.get("category") is not None:
                category = sanitize_category(str(data["category"]))
            if title != note.title or category != note.category:
                target, _ = self._target(user, category, title or note.title, current=path)
                os.rename(path, target)
                path = target
            if data.get("favorite") is not None:
                key = (user, note.id)
                (self._favorites.add if data["favorite"] else self._favorites.discard)(key)
            return self.to_json(user, self.scan_one(user, path))

    def delete(self, user: str, note: StoredNote) -> None:
        with self._lock:
            inode = note.path.stat().st_ino
            note.path.unlink()
            self._favorites.discard((user, note.id))
            # Forget the inode, so a file that later reuses it does not inherit this id.
            self._ids.pop((user, inode), None)


def sanitize_title(title: str) -> str:
    return " ".join(_ILLEGAL_TITLE.sub("", title).split())[:200]


def sanitize_category(category: str) -> str:
    parts = [" ".join(_ILLEGAL_CATEGORY.sub("", p).split()) for p in category.split("/")]
    return "/".join(p for p in parts if p and p not in (".", ".."))


def _title_from(content: str) -> str:
    first = next((line for line in content.splitlines() if line.strip()), "")
    return sanitize_title(first.lstrip("#").strip()) or "New note"


def _touch(path: Path, modified: Any) -> None:
    if isinstance(modified, int) and modified > 0:
        os.utime(path, (modified, modified))


def _etag_header(value: str) -> str:
    return f'"{value}"'


def _matches(header: str | None, etag: str) -> bool:
    """If-None-Match against one ETag; If-Match also takes a list (`"a", "b"`), as Notes does."""
    return header is not None and etag in {tag.strip().strip('"') for tag in header.split(",")}


async def notes_endpoint(request: Request, store: NotesStore, user: str) -> Response:
    """Dispatch `/index.php/apps/notes/api/v1/...` for an authenticated user."""
    rest = request.url.path.split("/api/v1", 1)[1].rstrip("/")
    method = request.method
    if rest == "/settings":
        if method == "PUT":
            # as Notes does, the notes folder moves for this user (its notes stay where they were)
            data = await _json(request)
            path = data.get("notesPath") if isinstance(data, dict) else None
            if isinstance(path, str) and path.strip("/") and ".." not in path.split("/"):
                store.folders[user] = path.strip("/")
        folder = store.folders.get(user, store.notes_folder)
        body = {"notesPath": folder, "fileSuffix": ".md", "noteMode": "edit"}
        return JSONResponse(body, headers=API_HEADERS)
    if rest == "/notes":
        if method == "GET":
            return _list(request, store, user)
        if method == "POST":
            data = await _json(request)
            if data is None:
                return JSONResponse({"message": "invalid JSON"}, status_code=400, headers=API_HEADERS)
            return JSONResponse(store.create(user, data), headers=API_HEADERS)
        return Response(status_code=405)
    match = re.fullmatch(r"/notes/(\d+)", rest)
    if not match:
        return JSONResponse({"message": "unknown route"}, status_code=404, headers=API_HEADERS)
    note = store.find(user, int(match.group(1)))
    if note is None:
        return JSONResponse(NOT_FOUND, status_code=404, headers=API_HEADERS)
    current = store.to_json(user, note)
    if method == "GET":
        if _matches(request.headers.get("if-none-match"), current["etag"]):
            return Response(status_code=304, headers={**API_HEADERS, "ETag": _etag_header(current["etag"])})
        return JSONResponse(current, headers={**API_HEADERS, "ETag": _etag_header(current["etag"])})
    if method == "PUT":
        if_match = request.headers.get("if-match")
        if if_match is not None and not _matches(if_match, current["etag"]):
            return JSONResponse(current, status_code=412, headers=API_HEADERS)
        data = await _json(request)
        if data is None:
            return JSONResponse({"message": "invalid JSON"}, status_code=400, headers=API_HEADERS)
        return JSONResponse(store.update(user, note, data), headers=API_HEADERS)
    if method == "DELETE":
        store.delete(user, note)
        return JSONResponse([], headers=API_HEADERS)
    return Response(status_code=405)


def _list(request: Request, store: NotesStore, user: str) -> Response:
    params = request.query_params
    notes = [store.to_json(user, n) for n in store.scan(user)]
    if "category" in params:
        notes = [n for n in notes if n["category"] == params["category"]]
    # Recorded: a real Nextcloud keeps `id` and `etag` even when asked to exclude them.
    excluded = {f for f in params.get("exclude", "").split(",") if f and f not in ("id", "etag")}
    chunk_size = int(params.get("chunkSize") or 0)
    offset = int(params.get("chunkCursor", "offset-0").removeprefix("offset-") or 0)
    headers = dict(API_HEADERS)
    page = notes
    if chunk_size > 0:
        page = notes[offset : offset + chunk_size]
        if offset + chunk_size < len(notes):
            headers["X-Notes-Chunk-Cursor"] = f"offset-{offset + chunk_size}"
            headers["X-Notes-Chunk-Pending"] = str(len(notes) - offset - chunk_size)
    body = [{k: v for k, v in n.items() if k not in excluded} for n in page]
    digest = hashlib.md5(json.dumps(body).encode(), usedforsecurity=False).hexdigest()
    headers["ETag"] = _etag_header(digest)
    headers["Last-Modified"] = time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())
    if _matches(request.headers.get("if-none-match"), digest):
        return Response(status_code=304, headers=headers)
    return JSONResponse(body, headers=headers)


async def _json(request: Request) -> dict[str, Any] | None:
    try:
        data = json.loads(await request.body() or b"{}")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
