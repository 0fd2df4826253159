"""Paths inside a user's files are untrusted input.

`clean()` turns what a caller typed into a normalised relative path ("Documents/a b.txt") or
refuses it: `..` and `.` segments (also percent-encoded ones), absolute URLs, NUL and other control
characters, backslashes. `encode()` percent-encodes each segment for a URL, so spaces, `#`, `?`,
`%` and non-ASCII letters reach Nextcloud as the file name they are. `relative()` maps an href
from the server back to such a path.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote, urlsplit

from nextcloud_mcp_server.nextcloud.errors import InvalidInput
from nextcloud_mcp_server.nextcloud.names import check_visible

__all__ = ["InvalidPath", "clean", "display", "encode", "named", "parent", "relative", "relatives"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAX_SEGMENT_BYTES = 250


class InvalidPath(InvalidInput):
    """A path that could escape the user's files, or that Nextcloud would refuse."""


def _php_trim(name: str) -> str:
    """`name` as PHP's trim() leaves it (ASCII white space and NUL off both ends)."""
    return name.strip(" \t\n\r\x00\x0b")


def clean(path: str) -> str:
    """A normalised path relative to the user's files root ('' is the root itself)."""
    if _CONTROL.search(path):
        raise InvalidPath("path must not contain NUL or control characters")
    try:
        check_visible(path, "path")
    except InvalidInput as exc:  # a path's own error, as every other refusal of a path
        raise InvalidPath(str(exc)) from None
    if "\\" in path:
        raise InvalidPath("path must use '/' as separator, not '\\'")
    if _SCHEME.match(path) or path.startswith("//"):
        raise InvalidPath("give a path inside your files (e.g. 'Documents/report.pdf'), not a URL")
    segments = []
    for segment in path.split("/"):
        if not segment:
            continue
        decoded = unquote(segment)
        # Nextcloud trims ASCII white space first (PHP's trim): " " is an empty name and " .." a
        # dot segment there, refused with 400 (seen on the real server).
        trimmed = _php_trim(decoded), _php_trim(segment)
        if "" in trimmed:
            raise InvalidPath("a file or folder name must not be blank")
        if any(name in (".", "..") for name in trimmed):
            raise InvalidPath("path must not contain '.' or '..' segments")
        if "/" in decoded or "\\" in decoded:
            # An encoded separator would be a different path to Nextcloud than to us.
            raise InvalidPath("path segments must not contain encoded separators")
        if len(segment.encode()) > MAX_SEGMENT_BYTES:
            raise InvalidPath(f"a file or folder name is longer than {MAX_SEGMENT_BYTES} bytes")
        segments.append(unicodedata.normalize("NFC", segment))
    return "/".join(segments)


def named(path: str) -> str:
    """A path Nextcloud or an app named (a Collectives page's file), as it is: what a caller types
    goes through `clean()`, which decodes `%2F` and refuses hidden characters, and so refused a
    page another user titled `a%2Fb` or with a right-to-left mark. Refused here is only what could
    leave the user's files or names nothing: control characters, a backslash, blank, `.` or `..`
    segments."""
    if _CONTROL.search(path) or "\\" in path:
        raise InvalidPath("a path named by the server holds a control character or a backslash")
    segments = path.strip("/").split("/")
    if any(_php_trim(segment) in ("", ".", "..") for segment in segments):
        raise InvalidPath("a path named by the server has a blank, '.' or '..' segment")
    return "/".join(segments)


def encode(path: str) -> str:
    """Percent-encode a cleaned path for a URL, segment by segment."""
    return "/".join(quote(segment, safe="") for segment in path.split("/")) if path else ""


def relative(href: str, root: str) -> str | None:
    """The cleaned path of a server href below `root` (a decoded path such as
    '/remote.php/dav/files/alice'), or None when the href is outside it."""
    # Nextcloud sends absolute paths: those skip urlsplit (a tenth of a 10,000-entry listing's CPU)
    plain = href.startswith("/") and not href.startswith("//") and "?" not in href and "#" not in href
    decoded = unicodedata.normalize("NFC", unquote(href if plain else urlsplit(href).path))
    return _below(decoded, root.rstrip("/"))


def _below(decoded: str, base: str) -> str | None:
    """A decoded href's path below `base` (no trailing slash): "" for `base` itself, None outside."""
    decoded = decoded.rstrip("/")
    if decoded == base:
        return ""
    if not decoded.startswith(base + "/"):
        return None
    return decoded[len(base) + 1 :]


def relatives(hrefs: list[str], root: str) -> list[str | None]:
    """`relative()` of each href, decoded together: one `unquote` of all of them joined by a
    newline costs a third of one per href (a 5,000-note listing: 4 against 14 ms). Used only when
    the result splits back into as many paths, each absolute, as there were hrefs (no href holds
    a newline, raw or percent-encoded, or a query); else each href is decoded alone."""
    joined = "\n".join(hrefs)
    if not hrefs or "?" in joined or "#" in joined or joined.count("\n") != len(hrefs) - 1:
        return [relative(href, root) for href in hrefs]
    decoded = unicodedata.normalize("NFC", unquote(joined)).split("\n")
    if len(decoded) != len(hrefs):
        return [relative(href, root) for href in hrefs]
    base = root.rstrip("/")
    return [
        _below(path, base) if href.startswith("/") and not href.startswith("//") else relative(href, root)
        for href, path in zip(hrefs, decoded, strict=True)
    ]


def parent(path: str) -> str:
    return path.rpartition("/")[0]


def display(path: str) -> str:
    """How a path is shown to people: with a leading slash."""
    return "/" + path
