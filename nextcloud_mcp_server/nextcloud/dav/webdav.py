"""WebDAV on the user's files (`/remote.php/dav/files/<user id>/`).

Listings are parsed as they stream in (see `dav_xml`; a changed folder's only where its answer's
bytes are new, `response_bytes`); reads use HTTP ranges and never hold more than the requested
page; writes stream the body. Answers follow the recordings of a real Nextcloud: MKCOL on an
existing folder 405, PUT new 201 / overwrite 204, MOVE or COPY onto an existing target with
`Overwrite: F` 412. Searches are in `file_search`, what each request asks Nextcloud for in
`dav_files`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, formatdate
from urllib.parse import quote

from nextcloud_mcp_server.nextcloud import etags, paths
from nextcloud_mcp_server.nextcloud.auth import Credential
from nextcloud_mcp_server.nextcloud.dav.files import (
    ETAG_PROPS,
    LISTING_PROPS,
    STAT_PROPS,
    EntryKey,
    entry_at,
    entry_key,
    propfind_body,
)
from nextcloud_mcp_server.nextcloud.dav.response_bytes import AnswerBytes, read_against
from nextcloud_mcp_server.nextcloud.dav.xml import read_multistatus_batches
from nextcloud_mcp_server.nextcloud.errors import (
    Conflict,
    InvalidInput,
    InvalidResponse,
    NotFound,
    PreconditionFailed,
)
from nextcloud_mcp_server.nextcloud.http import NextcloudHTTP
from nextcloud_mcp_server.nextcloud.models import FileEntry
from nextcloud_mcp_server.numbers import ascii_number
from nextcloud_mcp_server.outbound.answers import Headers

__all__ = ["PROPFIND_BODY", "FilePage", "NotModified", "WebDAVClient", "WriteResult"]

# What a listing's entries are read as (each key and its path), kept by their answer's bytes
Located = AnswerBytes[tuple[EntryKey, str | None]]

# The listing's request body (benchmarks make the same request directly).
PROPFIND_BODY = propfind_body(LISTING_PROPS).decode()
CHUNK = 64 * 1024


class NotModified(Exception):
    """A listing asked with `modified_since` was answered 304: the folder's modification time has
    not moved past it (which alone does not say the folder is unchanged: folder_listing.py)."""


@dataclass(frozen=True)
class FilePage:
    """Bytes of a file from `offset`; `total` is the file's size when the server said it."""

    data: bytes
    offset: int
    total: int | None
    mime: str
    charset: str | None
    etag: str | None


@dataclass(frozen=True)
class WriteResult:
    etag: str | None
    created: bool


class WebDAVClient:
    """The files of one user."""

    def __init__(self, http: NextcloudHTTP, credential: Credential, user_id: str) -> None:
        self._http = http
        self._credential = credential
        self.user_id = user_id
        self._prefix = f"/remote.php/dav/files/{quote(user_id, safe='')}"
        self.root = f"{http.base_path}/remote.php/dav/files/{user_id}"

    @property
    def host(self) -> str:
        return self._http.host

    def url_path(self, path: str) -> str:
        """The request path (below the Nextcloud base URL) of a cleaned path."""
        encoded = paths.encode(path)
        return f"{self._prefix}/{encoded}" if encoded else f"{self._prefix}/"

    def not_found(self, path: str, exc: NotFound) -> NotFound:
        return NotFound(self.host, f"no file or folder at {paths.display(path)}", status=404, body=exc.body)

    async def entries(
        self, method: str, url_path: str, body: bytes, headers: dict[str, str], *, missing: str
    ) -> AsyncGenerator[FileEntry, None]:
        """The file entries of a PROPFIND or SEARCH answer, as they stream in; a 404 is reported
        as no file or folder at `missing`, a 304 to a conditional request as `NotModified`."""
        async with aclosing(self._keys(method, url_path, body, headers, missing=missing)) as found:
            async for key, path in found:
                yield entry_at(key, path)

    async def _keys(
        self, method: str, url_path: str, body: bytes, headers: dict[str, str], *, missing: str
    ) -> AsyncGenerator[tuple[EntryKey, str], None]:
        """What `entries` builds each entry from: its key and its path (hrefs outside the user's
        files left out)."""
        async with aclosing(self._batches(method, url_path, body, headers, missing=missing)) as found:
            async for batch in found:
                for key, path in batch:
                    if path is not None:
                        yield key, path

    async def _batches(
        self,
        method: str,
        url_path: str,
        body: bytes,
        headers: dict[str, str],
        *,
        missing: str,
        memo: Located | None = None,
    ) -> AsyncGenerator[list[tuple[EntryKey, str | None]], None]:
        """Each entry's key and its path (None for an href outside the user's files), a batch at a
        time as they stream in. With `memo`, read against the previous answer's bytes
        (`response_bytes`)."""
        try:
            async with self._http.stream(
                method, url_path, credential=self._credential, headers=headers, content=body
            ) as response:
                if response.status_code == 304:
                    if "If-Modified-Since" in headers:
                        raise NotModified(missing)
                    raise InvalidResponse(self.host, f"{method} answered 304 to a request with no condition")
                if memo is None:
                    async for keys in read_multistatus_batches(response, self.host, entry_key):
                        yield self._located(keys)
                else:
                    async for batch in read_against(response, self.host, entry_key, self._located, memo):
                        yield batch
        except NotFound as exc:
            raise self.not_found(missing, exc) from None

    def _located(self, keys: list[EntryKey]) -> list[tuple[EntryKey, str | None]]:
        """Each key with its path below the files root (None for an href outside it)."""
        return list(zip(keys, paths.relatives([k[0] for k in keys], self.root), strict=True))

    def _propfind(
        self,
        path: str,
        depth: str,
        props: str,
        modified_since: datetime | None = None,
        memo: Located | None = None,
    ) -> AsyncGenerator[list[tuple[EntryKey, str | None]], None]:
        headers = {"Depth": depth, "Content-Type": "application/xml; charset=utf-8"}
        if modified_since is not None:
            # Sabre answers 304 before any listing work when the node's mtime is not later than
            # this, for every method (a folder's If-None-Match it ignores: only files have ETags
            # there); checked on 29 and 34 (ADR 0094)
            headers["If-Modified-Since"] = format_datetime(modified_since.astimezone(UTC), usegmt=True)
        return self._batches(
            "PROPFIND", self.url_path(path), propfind_body(props), headers, missing=path, memo=memo
        )

    async def _itself(self, path: str, props: str) -> FileEntry:
        # aclosing: the answer's connection goes back to the pool now, not when the generator is
        # collected (after the session may have closed)
        async with aclosing(self._propfind(path, "0", props)) as found:
            async for batch in found:
                for key, found_path in batch:
                    if found_path is not None:
                        return entry_at(key, found_path)
        raise NotFound(self.host, f"no file or folder at {paths.display(path)}", status=404)

    async def stat(self, path: str) -> FileEntry:
        return await self._itself(path, STAT_PROPS)

    async def current_etag(self, path: str) -> str | None:
        """The ETag of a file or folder now (one depth-0 PROPFIND asking for nothing else)."""
        return (await self._itself(path, ETAG_PROPS)).etag

    async def iter_directory(
        self, path: str, *, itself: bool = False, modified_since: datetime | None = None
    ) -> AsyncIterator[FileEntry]:
        """The entries of a folder, as they stream in; with `itself`, the folder's own entry too
        (a file listed with Depth 1 answers only itself: that is how a caller tells). Entries carry
        what a listing shows, not the file id (`stat` has it). With `modified_since`, raises
        `NotModified` instead when Nextcloud says the folder's mtime is not later."""
        async with aclosing(self.listing(path, modified_since=modified_since)) as found:
            async for batch in found:
                for key, entry_path in batch:
                    if entry_path is not None and (itself or entry_path != path):
                        yield entry_at(key, entry_path)

    def listing(
        self,
        path: str,
        *,
        modified_since: datetime | None = None,
        memo: Located | None = None,
    ) -> AsyncGenerator[list[tuple[EntryKey, str | None]], None]:
        """What `iter_directory` builds its entries from, the folder's own first: each entry's
        key and path (None for an href outside the user's files), a batch at a time, for a
        caller that builds only the entries it shows (`ListedEntries`). With
        `memo`, the entries Nextcloud sends as in the previous answer are not parsed again."""
        return self._propfind(path, "1", LISTING_PROPS, modified_since, memo)

    async def read(self, path: str, *, offset: int = 0, length: int) -> FilePage:
        """Up to `length` bytes from `offset`, asked for with a Range header; if the server sends
        the whole file instead, it is skipped through and cut, never held whole."""
        headers = {"Range": f"bytes={offset}-{offset + length - 1}"}
        chunks: list[bytes] = []
        try:
            async with self._http.stream(
                "GET", self.url_path(path), credential=self._credential, headers=headers, accept={416}
            ) as response:
                content_type = response.headers.get("content-type", "application/octet-stream")
                mime, _, params = content_type.partition(";")
                charset = next(
                    (p.split("=", 1)[1].strip().strip('"') for p in params.split(";") if "charset=" in p),
                    None,
                )
                etag = etags.plain(response.headers.get("etag")) or None
                total = _total_size(response.headers, response.status_code)
                if response.status_code == 416:
                    return FilePage(b"", offset, total, mime.strip(), charset, etag)
                skip = offset if response.status_code == 200 else 0
                wanted = length
                async for chunk in response.aiter_bytes():
                    if skip:
                        dropped = min(skip, len(chunk))
                        chunk, skip = chunk[dropped:], skip - dropped
                    if chunk:
                        chunks.append(chunk[:wanted])
                        wanted -= len(chunks[-1])
                    if wanted <= 0:
                        break
        except NotFound as exc:
            raise self.not_found(path, exc) from None
        return FilePage(b"".join(chunks), offset, total, mime.strip(), charset, etag)

    async def write(
        self,
        path: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        overwrite: bool = True,
        if_match: str | None = None,
        unmodified_since: int | None = None,
        create_parents: bool = False,
    ) -> WriteResult:
        """Upload `data`, streamed in chunks. `overwrite=False` refuses an existing file;
        `if_match` refuses a file that changed since its ETag was read, `unmodified_since` (Unix
        seconds, from an answer that gave no ETag) one changed after that second."""
        if not path:
            raise InvalidInput("give a file path, not the root folder")
        if create_parents:
            await self.make_directories(paths.parent(path))
        headers = {"Content-Type": content_type, "Content-Length": str(len(data))}
        if if_match:
            headers["If-Match"] = etags.quoted(if_match)
        elif not overwrite:
            headers["If-None-Match"] = "*"
        if unmodified_since is not None:
            headers["If-Unmodified-Since"] = formatdate(unmodified_since, usegmt=True)

        async def body() -> AsyncIterator[bytes]:
            for start in range(0, len(data), CHUNK):
                yield data[start : start + CHUNK]

        try:
            async with self._http.stream(
                "PUT", self.url_path(path), credential=self._credential, headers=headers, content=body()
            ) as response:
                etag = etags.plain(response.headers.get("etag") or response.headers.get("oc-etag"))
                return WriteResult(etag or None, response.status_code == 201)
        except PreconditionFailed as exc:
            if if_match:
                message = f"{paths.display(path)} changed since its etag was read; nothing was written"
            elif unmodified_since is not None:
                message = f"{paths.display(path)} changed since it was read; nothing was written"
            else:
                message = f"{paths.display(path)} already exists; pass overwrite=true to replace it"
            raise PreconditionFailed(self.host, message, status=412, body=exc.body) from None
        except (Conflict, NotFound) as exc:
            # Sabre answers a missing parent with 409, Nextcloud with 404 ("could not be located")
            raise Conflict(
                self.host,
                f"the folder {paths.display(paths.parent(path))} does not exist (pass create_parents=true)",
                status=exc.status,
                body=exc.body,
            ) from None

    async def make_directory(self, path: str) -> None:
        if not path:
            raise InvalidInput("the root folder always exists")
        try:
            await self._http.request("MKCOL", self.url_path(path), credential=self._credential)
        except Conflict as exc:
            if exc.status == 405:
                raise Conflict(
                    self.host, f"{paths.display(path)} already exists", status=405, body=exc.body
                ) from None
            raise Conflict(
                self.host,
                f"the folder {paths.display(paths.parent(path))} does not exist (pass parents=true)",
                status=exc.status,
                body=exc.body,
            ) from None

    async def make_directories(self, path: str) -> None:
        """Create `path` and any missing parents; existing folders are fine."""
        segments = path.split("/") if path else []
        for depth in range(1, len(segments) + 1):
            try:
                await self.make_directory("/".join(segments[:depth]))
            except Conflict as exc:
                if exc.status != 405:
                    raise

    async def delete(self, path: str, *, if_match: str | None = None) -> None:
        """Delete a file or folder; with `if_match`, only the version with that ETag."""
        if not path:
            raise InvalidInput("refusing to delete the root folder")
        headers = {"If-Match": etags.quoted(if_match)} if if_match else None
        try:
            await self._http.request(
                "DELETE", self.url_path(path), credential=self._credential, headers=headers
            )
        except NotFound as exc:
            raise self.not_found(path, exc) from None
        except PreconditionFailed as exc:
            raise PreconditionFailed(
                self.host,
                f"{paths.display(path)} changed since it was read; nothing was deleted",
                status=412,
                body=exc.body,
            ) from None

    async def transfer(
        self, method: str, source: str, destination: str, *, overwrite: bool, replace_etag: str | None = None
    ) -> bool:
        """MOVE or COPY; True when the destination was created, False when it was replaced.
        `replace_etag` replaces the destination file only while it is that version (RFC 4918 `If`
        with a tagged list on the destination; real Nextcloud honours it for files, not folders)."""
        if not source or not destination:
            raise InvalidInput("source and destination must be paths below the root folder")
        if source == destination or destination.startswith(source + "/"):
            raise InvalidInput("the destination must not be the source or inside it")
        headers = {
            "Destination": self._http.url(self.url_path(destination)),
            "Overwrite": "T" if overwrite else "F",
        }
        if replace_etag:
            headers["If"] = f'<{headers["Destination"]}> (["{replace_etag.strip(chr(34))}"])'
        try:
            response = await self._http.request(
                method, self.url_path(source), credential=self._credential, headers=headers
            )
        except NotFound as exc:
            raise self.not_found(source, exc) from None
        except PreconditionFailed as exc:
            if replace_etag:
                raise PreconditionFailed(
                    self.host, f"{paths.display(destination)} changed; nothing was replaced", status=412
                ) from None
            raise PreconditionFailed(
                self.host,
                f"target exists: {paths.display(destination)}; pass overwrite=true to replace it",
                status=412,
                body=exc.body,
            ) from None
        except Conflict as exc:
            raise Conflict(
                self.host,
                f"the folder {paths.display(paths.parent(destination))} does not exist",
                status=exc.status,
                body=exc.body,
            ) from None
        return response.status_code == 201


def _total_size(headers: Headers, status: int) -> int | None:
    """File size from Content-Range (`bytes a-b/total`, `bytes */total`) or Content-Length."""
    get = headers.get
    content_range = get("content-range") or ""
    if "/" in content_range:
        total = content_range.rsplit("/", 1)[1].strip()
        return ascii_number(total)
    length = get("content-length")
    return ascii_number(length) if status == 200 else None
