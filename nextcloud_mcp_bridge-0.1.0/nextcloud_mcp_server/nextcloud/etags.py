"""ETags as Nextcloud sends them, as a caller gives them back, and as `If-Match` wants them.

Nextcloud's ETags are strong, but nginx in front of it turns the ETag of an answer it compresses
into a weak one (`W/"..."`): a card with a photo, a whole text file fetched without a Range. The
stored version is the same, and `If-Match` with the weak form is refused (RFC 9110 §13.1.1: weak
ETags never match), so every ETag is kept in one plain form (no `W/`, no quotes) and quoted again
when sent.

An ETag that comes from outside (a model's argument) is only ever compared, never sent: `checked`
accepts exactly one opaque tag. An empty one, or one that would make `If-Match` a list
(`x", "<real>`, which Notes and sabre accept when any entry matches), or that carries control
characters, is refused as input; `quoted` refuses the same, so no header can become a list.
"""

from __future__ import annotations

import re

from nextcloud_mcp_server.nextcloud.errors import InvalidInput

__all__ = ["MAX_ETAG", "checked", "plain", "quoted"]

MAX_ETAG = 200
# RFC 9110 etagc (visible ASCII but `"`), without the comma that separates If-Match lists.
_OPAQUE = re.compile(r"[\x21\x23-\x2b\x2d-\x7e]+")


def plain(value: str | None) -> str:
    """`W/"abc"`, `"abc"` and `abc` all become `abc`; None becomes ''."""
    return (value or "").strip().removeprefix("W/").strip('"')


def checked(value: str, name: str = "etag") -> str:
    """The plain form of one ETag given from outside: `abc`, `"abc"` or `W/"abc"` (surrounding
    spaces ignored). Anything else (empty, a list, quotes or commas inside, control characters,
    non-ASCII) is refused: it would never name one version."""
    text = value.strip(" \t")
    weak = text.startswith("W/")
    inner = text[2:] if weak else text
    if len(inner) >= 2 and inner[0] == inner[-1] == '"':
        inner = inner[1:-1]
    elif weak:
        inner = ""  # W/ without a quoted tag
    if not inner or len(inner) > MAX_ETAG or not _OPAQUE.fullmatch(inner):
        raise InvalidInput(
            f"{name} must be one ETag exactly as it was read (such as 5f3c9a1e...): not empty, at "
            f"most {MAX_ETAG} characters, no quotes, commas, spaces or control characters inside"
        )
    return inner


def quoted(value: str) -> str:
    """The strong form for `If-Match`: `"abc"`; never a list."""
    return f'"{checked(plain(value), "the ETag")}"'
