"""Facts about one file that decide what an approval covers (ADR 0058, 0059):

- `sharing`: who reads what is attached to it (a comment): the owner and the shares of the file
  and of every folder above it (`oc:owner-id`, `oc:share-types`, `nc:sharees`, one depth-0
  PROPFIND per level);
- `binding`: what its content is, by something a client cannot set. A file's ETag and time are
  not that: on local storage Nextcloud's ETag is a hash of the file's mtime (which any WebDAV
  client sets with `X-OC-Mtime` or a PROPPATCH, in whole seconds), inode, device and size, so a
  rewrite with the same size and mtime keeps it. The binding is Nextcloud's checksum when it has
  one (`oc:checksums`, cleared by Nextcloud when the file changes), else a SHA-256 of the bytes
  (up to `max_bytes`, streamed), and always `nc:upload_time`, which Nextcloud sets from its own
  clock at every WebDAV upload.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from nextcloud_mcp_server.nextcloud import paths
from nextcloud_mcp_server.nextcloud.dav.file_apps import DavApp
from nextcloud_mcp_server.nextcloud.dav.xml import NC_ORG, OC, DavResponse
from nextcloud_mcp_server.nextcloud.errors import NotFound
from nextcloud_mcp_server.numbers import ascii_number

__all__ = ["MAX_LEVELS", "FileFacts", "Sharing"]

MAX_LEVELS = 64  # folders above a file whose shares are read
MAX_SHAREES = 200  # sharees read per level
_PROPS = (
    '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="{oc}" xmlns:nc="{nc}"><d:prop>'
    "{props}</d:prop></d:propfind>"
)
_SHARING = "<oc:owner-id/><oc:owner-display-name/><oc:share-types/><nc:sharees/>"
_CONTENT = "<oc:checksums/><nc:upload_time/><d:getetag/><oc:size/>"


@dataclass(frozen=True)
class Sharing:
    """The owner and shares of one file or folder, as Nextcloud tells this user."""

    path: str
    owner: str
    owner_name: str
    share_types: tuple[int, ...]
    sharees: tuple[tuple[int, str, str], ...]  # (share type, id, display name)


def _body(props: str) -> bytes:
    return _PROPS.format(oc=OC, nc=NC_ORG, props=props).encode()


def _sharing(path: str, item: DavResponse) -> Sharing:
    types = item.props.get(f"{{{OC}}}share-types")
    found = [(t.text or "").strip() for t in (types if types is not None else [])]
    sharees = item.props.get(f"{{{NC_ORG}}}sharees")
    each = []
    for sharee in list(sharees if sharees is not None else [])[:MAX_SHAREES]:
        kind = (sharee.findtext(f"{{{NC_ORG}}}type") or "").strip()
        each.append(
            (
                -1 if (number := ascii_number(kind)) is None else number,
                (sharee.findtext(f"{{{NC_ORG}}}id") or "")[:200],
                (sharee.findtext(f"{{{NC_ORG}}}display-name") or "")[:200],
            )
        )
    return Sharing(
        path=path,
        owner=(item.text(f"{{{OC}}}owner-id") or "")[:200],
        owner_name=(item.text(f"{{{OC}}}owner-display-name") or "")[:200],
        share_types=tuple(sorted({n for t in found if (n := ascii_number(t)) is not None})),
        sharees=tuple(sorted(each)),
    )


class FileFacts(DavApp):
    """Sharing and content facts of the user's files (see the module's docstring)."""

    def _url(self, path: str) -> str:
        encoded = paths.encode(path)
        return (
            f"/remote.php/dav/files/{self._user}/{encoded}"
            if encoded
            else f"/remote.php/dav/files/{self._user}/"
        )

    async def _one(self, path: str, props: str) -> DavResponse:
        try:
            async for item in self.multistatus("PROPFIND", self._url(path), _body(props), depth="0"):
                return item
        except NotFound:
            pass
        raise NotFound(self.host, f"no file or folder at {paths.display(path)}", status=404)

    async def sharing(self, path: str) -> list[Sharing]:
        """The file's own sharing and that of every folder above it, nearest first (the root
        folder last); at most MAX_LEVELS levels."""
        levels = [path]
        while levels[-1] and len(levels) < MAX_LEVELS:
            levels.append(paths.parent(levels[-1]))
        return [_sharing(level, await self._one(level, _SHARING)) for level in levels]

    async def binding(self, path: str, *, max_bytes: int) -> str:
        """What the file's content is, by what a client cannot set (see the module's docstring):
        'checksum:SHA1:…', else 'sha256:…' of its bytes, else 'unread:<size>' for a file over
        `max_bytes` without a checksum; each with '|upload:<time>'."""
        item = await self._one(path, _CONTENT)
        upload = item.text(f"{{{NC_ORG}}}upload_time") or ""
        checksums = item.text(f"{{{OC}}}checksums") or ""
        if checksums:
            return f"checksum:{checksums}|upload:{upload}"
        size_text = item.text(f"{{{OC}}}size") or ""
        size = ascii_number(size_text)
        if size is None or size > max_bytes:
            return f"unread:{size_text}|upload:{upload}"
        hasher = hashlib.sha256()
        async with self._http.stream("GET", self._url(path), credential=self._credential) as response:
            response.limit = max_bytes + 1
            async for chunk in response.aiter_bytes():
                hasher.update(chunk)
        return f"sha256:{hasher.hexdigest()}|upload:{upload}"
