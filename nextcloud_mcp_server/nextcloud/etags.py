"""ETags as Nextcloud sends them, and as `If-Match` wants them back.

Nextcloud's ETags are strong, but nginx in front of it turns the ETag of an answer it compresses
into a weak one (`W/"..."`): a card with a photo, a whole text file fetched without a Range. The
stored version is the same, and `If-Match` with the weak form is refused (RFC 9110 §13.1.1: weak
ETags never match), so every ETag is kept in one plain form (no `W/`, no quotes) and quoted again
when sent.
"""

from __future__ import annotations

__all__ = ["plain", "quoted"]


def plain(value: str | None) -> str:
    """`W/"abc"`, `"abc"` and `abc` all become `abc`; None becomes ''."""
    return (value or "").strip().removeprefix("W/").strip('"')


def quoted(value: str) -> str:
    """The strong form for `If-Match`: `"abc"`."""
    return f'"{plain(value)}"'
